// Attention against a naive double-precision softmax attention, on every ISA and KV cache type,
// plus bitwise invariance within each ISA (batch size, row placement, threads, ring layout).
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/attention_isa.h"
#include "kernels/attention_test_util.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"
#include "tensor/dequantize.h"

namespace tandem::kernels {
namespace {

using testing_attention::FillCache;
using testing_attention::kKvTypes;
using testing_attention::RandomVector;
using testing_attention::RunAttention;
using testing_attention::TestCache;
using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;
using testing_kernels::Nmse;

TEST(AttentionTest, MatchesNaiveDoubleOnEveryIsaAndType) {
  struct Heads {
    int n_heads, n_kv_heads;
  };
  const int32_t n_pos = 70;  // three key blocks, the last partial
  for (int head_dim : {32, 64, 256, 512}) {
    for (Heads heads : {Heads{4, 1}, Heads{8, 2}, Heads{2, 2}, Heads{16, 1}}) {
      for (TensorType type : kKvTypes) {
        TestCache cache(type, heads.n_kv_heads, head_dim, n_pos);
        FillCache(cache, n_pos, heads.n_kv_heads, head_dim, 100 + head_dim);
        const KvView kv = cache.View({0, n_pos});
        std::vector<int32_t> positions;
        for (int32_t p = 0; p < n_pos; p += 3) positions.push_back(p);
        positions.push_back(n_pos - 1);
        const size_t row = static_cast<size_t>(heads.n_heads) * head_dim;
        const std::vector<float> q = RandomVector(positions.size() * row, 7);
        for (int32_t window : {0, 16}) {
          std::vector<double> want;
          for (size_t r = 0; r < positions.size(); ++r) {
            const auto one = cache.Naive(q.data() + r * row, heads.n_heads,
                                         VisibleKeys(positions[r], window), 1.0f);
            want.insert(want.end(), one.begin(), one.end());
          }
          std::vector<float> scalar;
          for (Isa isa : SupportedIsas()) {
            SCOPED_TRACE(std::string(IsaName(isa)) + " " + std::string(TensorTypeName(type)) +
                         " hd=" + std::to_string(head_dim) + " H=" + std::to_string(heads.n_heads) +
                         " Hkv=" + std::to_string(heads.n_kv_heads) +
                         " W=" + std::to_string(window));
            IsaScope scope(isa);
            const std::vector<float> got = RunAttention(kv, heads.n_heads, q, positions, window);
            EXPECT_LT(Nmse(got, want), 1e-11);
            if (isa == Isa::kScalar) {
              scalar = got;
            } else {
              EXPECT_LT(Nmse(got, std::vector<double>(scalar.begin(), scalar.end())), 1e-11);
            }
          }
        }
      }
    }
  }
}

// Scores that keep rising across blocks exercise the running-max rescaling; large ones must not
// overflow. A scale other than 1 is applied to q·k.
TEST(AttentionTest, RisingLargeScoresAndScale) {
  const int hd = 64, n_pos = 100;
  TestCache cache(TensorType::kF32, 1, hd, n_pos);
  const std::vector<float> q = RandomVector(hd, 8);
  double qq = 0;
  for (float x : q) qq += x * x;
  for (int32_t p = 0; p < n_pos; ++p) {
    std::vector<float> k(hd);
    for (int d = 0; d < hd; ++d) k[d] = static_cast<float>(q[d] * (p * 1.2 / qq));  // score 1.2p
    const std::vector<float> v = RandomVector(hd, 300 + p);
    cache.Put(p, k.data(), v.data());
  }
  const KvView kv = cache.View({0, n_pos});
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (float scale : {1.0f, 0.125f}) {
      const std::vector<float> got =
          RunAttention(kv, 1, q, {n_pos - 1}, 0, nullptr, nullptr, scale);
      // Scores up to ~120 carry an f32 rounding of ~1e-5 each, which exp turns into a relative
      // weight error of ~1e-5: NMSE ~1e-10.
      EXPECT_LT(Nmse(got, cache.Naive(q.data(), 1, {0, n_pos}, scale)), 1e-8) << IsaName(isa);
    }
  }
}

// A row's output must be bitwise the same whatever the batch it is computed in, its place in the
// batch, the memory layout of q and out, and the number of threads.
TEST(AttentionTest, BitwiseInvariantToBatchPlacementAndThreads) {
  const int n_heads = 8, n_kv_heads = 2, n_pos = 100;
  for (TensorType type : {TensorType::kF16, TensorType::kQ4_0, TensorType::kF32}) {
    for (int hd : {64, 256}) {
      TestCache cache(type, n_kv_heads, hd, n_pos);
      FillCache(cache, n_pos, n_kv_heads, hd, 500);
      const KvView kv = cache.View({0, n_pos});
      const size_t row = static_cast<size_t>(n_heads) * hd;
      std::vector<int32_t> all(n_pos);
      for (int32_t p = 0; p < n_pos; ++p) all[p] = p;
      const std::vector<float> q = RandomVector(n_pos * row, 9);
      for (Isa isa : SupportedIsas()) {
        SCOPED_TRACE(std::string(IsaName(isa)) + " " + std::string(TensorTypeName(type)) +
                     " hd=" + std::to_string(hd));
        IsaScope scope(isa);
        for (int32_t window : {0, 40}) {
          const std::vector<float> want = RunAttention(kv, n_heads, q, all, window);
          // Threads 1..4 on the whole batch.
          for (int threads = 1; threads <= 4; ++threads) {
            ThreadPool pool(threads);
            EXPECT_TRUE(BitwiseEqual(RunAttention(kv, n_heads, q, all, window, &pool), want))
                << threads;
          }
          // Chunked like prefill / decode / verify batches, with q and out at odd offsets.
          ThreadPool pool(3);
          int32_t begin = 0;
          for (int chunk : {1, 7, 2, 17, 1, 33, 39}) {
            const int32_t n = std::min<int32_t>(chunk, n_pos - begin);
            const size_t offset = 3 + chunk;  // floats of padding before the batch
            const size_t stride = row + 5;
            std::vector<float> q_buf(offset + n * stride, 0.0f), out_buf(q_buf.size(), 0.0f);
            for (int32_t r = 0; r < n; ++r) {
              std::copy(q.begin() + (begin + r) * row, q.begin() + (begin + r + 1) * row,
                        q_buf.begin() + offset + r * stride);
            }
            std::vector<int32_t> positions(all.begin() + begin, all.begin() + begin + n);
            AttentionArgs args;
            args.n_rows = n;
            args.n_heads = n_heads;
            args.q = q_buf.data() + offset;
            args.q_row_stride = stride;
            args.out = out_buf.data() + offset;
            args.out_row_stride = stride;
            args.positions = positions.data();
            args.window = window;
            args.kv = kv;
            Attention(args, &pool);
            for (int32_t r = 0; r < n; ++r) {
              const std::vector<float> got(out_buf.begin() + offset + r * stride,
                                           out_buf.begin() + offset + r * stride + row);
              const std::vector<float> expected(want.begin() + (begin + r) * row,
                                                want.begin() + (begin + r + 1) * row);
              EXPECT_TRUE(BitwiseEqual(got, expected)) << "position " << begin + r;
            }
            begin += n;
          }
        }
      }
    }
  }
}

// Rows that see more than kAttentionKeySplit keys are computed as splits folded in order: they
// still match the naive softmax, and a row's bits are the same whether its splits ran on one
// thread or on several (decode), alone or among other rows (prefill, verification).
TEST(AttentionTest, LongRowsAreSplitAndKeepTheirBits) {
  constexpr int32_t kSplit = kAttentionKeySplit;
  const int32_t n_pos = 2 * kSplit + 550;  // three splits, the last partial
  const int hd = 64;
  struct Heads {
    int n_heads, n_kv_heads;
  };
  for (Heads heads : {Heads{8, 1}, Heads{4, 2}}) {
    for (TensorType type : {TensorType::kF16, TensorType::kQ4_0}) {
      TestCache cache(type, heads.n_kv_heads, hd, n_pos);
      FillCache(cache, n_pos, heads.n_kv_heads, hd, 900);
      const KvView kv = cache.View({0, n_pos});
      const size_t row = static_cast<size_t>(heads.n_heads) * hd;
      // Rows just under, at and past a split's end, and the last.
      const std::vector<int32_t> positions = {kSplit - 2, kSplit - 1, kSplit,    kSplit + 1,
                                              2 * kSplit, n_pos - 3,  n_pos - 2, n_pos - 1};
      const std::vector<float> q = RandomVector(positions.size() * row, 21, -2.0f, 2.0f);
      for (Isa isa : SupportedIsas()) {
        SCOPED_TRACE(std::string(IsaName(isa)) + " " + std::string(TensorTypeName(type)) +
                     " H=" + std::to_string(heads.n_heads));
        IsaScope scope(isa);
        const std::vector<float> batch = RunAttention(kv, heads.n_heads, q, positions, 0);
        for (size_t r = 0; r < positions.size(); ++r) {
          SCOPED_TRACE("position " + std::to_string(positions[r]));
          const std::vector<float> q_row(q.begin() + r * row, q.begin() + (r + 1) * row);
          const std::vector<float> want(batch.begin() + r * row, batch.begin() + (r + 1) * row);
          EXPECT_LT(Nmse(want, cache.Naive(q_row.data(), heads.n_heads,
                                           VisibleKeys(positions[r], 0), 1.0f)),
                    1e-11);
          for (int threads = 1; threads <= 3; ++threads) {  // its splits on each thread
            ThreadPool pool(threads);
            EXPECT_TRUE(BitwiseEqual(
                RunAttention(kv, heads.n_heads, q_row, {positions[r]}, 0, &pool), want))
                << threads << " threads";
          }
        }
        ThreadPool pool(2);  // the whole batch, each row's splits on one thread
        EXPECT_TRUE(BitwiseEqual(RunAttention(kv, heads.n_heads, q, positions, 0, &pool), batch));
      }
    }
  }
}

// The ISA entry points take a group of query heads sharing one KV head; every grouping must
// give each head the bits it gets alone.
TEST(AttentionTest, HeadGroupingDoesNotChangeBits) {
  using AttendHeadsFn = void (*)(const float*, int, const KvView&, int, KeyRange, float, float*,
                                 const AttendSplitState*);
  const int hd = 64, n_pos = 75;
  TestCache cache(TensorType::kF16, 2, hd, n_pos);
  FillCache(cache, n_pos, 2, hd, 6000);
  const KvView kv = cache.View({0, n_pos});
  const std::vector<float> q = RandomVector(kAttendMaxHeads * hd, 14);
  for (Isa isa : SupportedIsas()) {
    const AttendHeadsFn attend = isa == Isa::kAvx512 ? avx512::AttendHeads
                                 : isa == Isa::kAvx2 ? avx2::AttendHeads
                                                     : ref::AttendHeads;
    std::vector<float> alone(kAttendMaxHeads * hd);
    for (int g = 0; g < kAttendMaxHeads; ++g) {
      attend(q.data() + g * hd, 1, kv, 1, {3, n_pos}, 1.0f, alone.data() + g * hd, nullptr);
    }
    for (int n_heads : {2, 3, kAttendMaxHeads}) {
      std::vector<float> grouped(kAttendMaxHeads * hd, 0.0f);
      for (int first = 0; first < kAttendMaxHeads; first += n_heads) {
        const int n = std::min(n_heads, kAttendMaxHeads - first);
        attend(q.data() + first * hd, n, kv, 1, {3, n_pos}, 1.0f, grouped.data() + first * hd,
               nullptr);
      }
      EXPECT_TRUE(BitwiseEqual(grouped, alone)) << IsaName(isa) << " groups of " << n_heads;
    }
  }
}

// A sliding-window layer keeps a ring of window + max batch - 1 slots; a long sequence streamed
// in small batches must give the same bits as an unbounded cache, and match the naive reference.
TEST(AttentionTest, SlidingWindowRingMatchesUnboundedCache) {
  const int hd = 32, n_heads = 2, n_kv_heads = 1, window = 16, max_batch = 4, n_pos = 120;
  const int64_t ring_slots = window + max_batch - 1;
  for (TensorType type : {TensorType::kF32, TensorType::kBF16, TensorType::kQ8_0}) {
    for (bool head_major : {false, true}) {
      TestCache ring(type, n_kv_heads, hd, ring_slots, head_major);
      TestCache full(type, n_kv_heads, hd, n_pos);
      for (Isa isa : SupportedIsas()) {
        SCOPED_TRACE(std::string(IsaName(isa)) + " " + std::string(TensorTypeName(type)));
        IsaScope scope(isa);
        int32_t end = 0;
        for (int step = 0; end < n_pos; ++step) {
          const int32_t n = std::min<int32_t>(1 + step % max_batch, n_pos - end);
          std::vector<int32_t> positions;
          for (int32_t p = end; p < end + n; ++p) {
            const std::vector<float> k = RandomVector(hd, 1000 + 2 * p);
            const std::vector<float> v = RandomVector(hd, 1001 + 2 * p);
            ring.Put(p, k.data(), v.data());
            full.Put(p, k.data(), v.data());
            positions.push_back(p);
          }
          end += n;
          const KeyRange ring_stored{static_cast<int32_t>(std::max<int64_t>(0, end - ring_slots)),
                                     end};
          const std::vector<float> q = RandomVector(n * n_heads * hd, 2000 + end);
          const std::vector<float> got =
              RunAttention(ring.View(ring_stored), n_heads, q, positions, window);
          EXPECT_TRUE(
              BitwiseEqual(got, RunAttention(full.View({0, end}), n_heads, q, positions, window)));
          std::vector<double> want;
          for (int r = 0; r < n; ++r) {
            const auto one = full.Naive(q.data() + r * n_heads * hd, n_heads,
                                        VisibleKeys(positions[r], window), 1.0f);
            want.insert(want.end(), one.begin(), one.end());
          }
          EXPECT_LT(Nmse(got, want), 1e-11) << "end " << end;
        }
      }
    }
  }
}

// The MTP assistant: Q-only heads against the target's cache with explicit key ranges (e.g. all
// committed positions, or the last `window` of them), and V = K for layers that store no V.
TEST(AttentionTest, ExplicitKeyRangesAndVEqualsK) {
  const int hd = 64, n_pos = 45;
  TestCache target(TensorType::kF16, 1, hd, 64);
  FillCache(target, n_pos, 1, hd, 3000);
  const std::vector<KeyRange> ranges = {{0, n_pos}, {n_pos - 32, n_pos}, {10, 11}};
  const std::vector<int32_t> positions(3, n_pos);  // all rows at the same draft position
  const int n_heads = 2;
  const std::vector<float> q = RandomVector(3 * n_heads * hd, 10);
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (bool v_is_k : {false, true}) {
      const KvView kv = target.View({0, n_pos}, v_is_k);
      const std::vector<float> got =
          RunAttention(kv, n_heads, q, positions, 0, nullptr, ranges.data());
      std::vector<double> want;
      for (int r = 0; r < 3; ++r) {
        const auto one =
            target.Naive(q.data() + r * n_heads * hd, n_heads, ranges[r], 1.0f, v_is_k);
        want.insert(want.end(), one.begin(), one.end());
      }
      EXPECT_LT(Nmse(got, want), 1e-11) << IsaName(isa) << " v_is_k " << v_is_k;
    }
    // A single visible key returns its V exactly (up to the 1/1 normalisation).
    const std::vector<float> got =
        RunAttention(target.View({0, n_pos}), n_heads, q, positions, 0, nullptr, ranges.data());
    const std::vector<double> single =
        target.Naive(q.data() + 2 * n_heads * hd, n_heads, {10, 11}, 1.0f);
    for (int d = 0; d < n_heads * hd; ++d) EXPECT_EQ(got[2 * n_heads * hd + d], single[d]);
  }
}

TEST(AttentionTest, EmptyKeyRangeGivesZeros) {
  TestCache cache(TensorType::kF32, 1, 32, 8);
  FillCache(cache, 4, 1, 32, 4000);
  const KeyRange empty{2, 2};
  const std::vector<float> q = RandomVector(32, 11);
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (float x : RunAttention(cache.View({0, 4}), 1, q, {3}, 0, nullptr, &empty))
      EXPECT_EQ(x, 0.0f);
  }
}

TEST(AttentionTest, VisibleKeys) {
  EXPECT_EQ(VisibleKeys(0, 0).begin, 0);
  EXPECT_EQ(VisibleKeys(0, 0).end, 1);
  EXPECT_EQ(VisibleKeys(100, 0).begin, 0);
  EXPECT_EQ(VisibleKeys(100, 32).begin, 69);  // 100 - 69 = 31 < 32; 100 - 68 = 32 is not
  EXPECT_EQ(VisibleKeys(100, 32).end, 101);
  EXPECT_EQ(VisibleKeys(5, 32).begin, 0);
}

TEST(AttentionTest, StoreKvRowEncodesEachType) {
  const std::vector<float> x = RandomVector(64, 12, -2.0f, 2.0f);
  for (TensorType type : kKvTypes) {
    std::vector<uint8_t> row(KvRowBytes(type, 64));
    StoreKvRow(type, x.data(), 64, row.data());
    std::vector<float> back(64);
    DequantizeRow(type, row.data(), back.data(), 64);
    // q4_0 steps are max|x|/8 = 0.25 here; q8_0 steps max|x|/127; f16/bf16 relative 2^-11/2^-8.
    const double tol = type == TensorType::kF32 ? 0.0 : type == TensorType::kQ4_0 ? 0.26 : 0.02;
    for (int i = 0; i < 64; ++i) EXPECT_NEAR(back[i], x[i], tol) << TensorTypeName(type);
  }
  EXPECT_EQ(KvRowBytes(TensorType::kQ8_0, 256), 8u * 34u);
  EXPECT_EQ(KvRowBytes(TensorType::kF16, 256), 512u);
}

// Expects `fn` to throw Error of `kind` whose message contains `text`.
template <typename F>
void ExpectError(F fn, ErrorKind kind, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(AttentionTest, RejectsInconsistentArguments) {
  TestCache cache(TensorType::kF32, 2, 32, 16);
  FillCache(cache, 16, 2, 32, 5000);
  const std::vector<float> q = RandomVector(4 * 32, 13);
  std::vector<float> out(4 * 32);
  AttentionArgs good;
  const int32_t pos = 15;
  good.n_rows = 1;
  good.n_heads = 4;
  good.q = q.data();
  good.q_row_stride = 4 * 32;
  good.out = out.data();
  good.out_row_stride = 4 * 32;
  good.positions = &pos;
  good.kv = cache.View({0, 16});
  Attention(good);

  AttentionArgs a = good;
  a.kv.type = TensorType::kQ4_1;
  ExpectError([&] { Attention(a); }, ErrorKind::kUnsupported, "q4_1");
  a = good;
  a.kv.head_dim = 40;
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "head_dim 40");
  a = good;
  a.n_heads = 3;
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "n_heads 3");
  a = good;
  a.kv.stored = {4, 16};  // position 15 with no window needs keys from 0
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "needs key positions [0, 16)");
  a = good;
  a.kv.stored = {0, 15};  // its own key is not written yet
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "cache holds [0, 15)");
  a = good;
  a.kv.stored = {0, 17};  // more positions than slots
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "16 slots");
  a = good;
  a.kv.slot_stride_bytes = 64;  // rows would overlap
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "strides");
  a = good;
  a.q = nullptr;
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "non-null");
  a = good;
  a.q_row_stride = 32;
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "q_row_stride");
  const int32_t negative = -1;
  a = good;
  a.positions = &negative;
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "position -1");
  const int32_t path[] = {14, 3};  // position 15's key remapped to 3; 14 is as stored
  KeyRemap remap{path, 14, 1};     // the remap ends before the row's own key
  a = good;
  a.remaps = &remap;
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "does not end its keys");
  const int32_t outside[] = {14, 16};
  remap = KeyRemap{outside, 14, 2};
  ExpectError([&] { Attention(a); }, ErrorKind::kInvalidArgument, "remaps a key to position 16");
  remap = KeyRemap{path, 14, 2};
  Attention(a);
  ExpectError([&] { StoreKvRow(TensorType::kQ8_0, q.data(), 48, out.data()); },
              ErrorKind::kInvalidArgument, "head_dim 48");
}

}  // namespace
}  // namespace tandem::kernels
