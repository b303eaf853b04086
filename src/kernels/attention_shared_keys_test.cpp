// AttentionSharedKeys: bitwise Attention's result for rows that see one key range, on every ISA,
// cache type, head width and thread count; and its argument checks.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Case {
  TensorType type;
  int n_heads, n_kv_heads, head_dim;
  int n_keys, n_rows;
  KeyRange keys;
};

// Runs both entry points on the same data and compares every row and head bit for bit.
void Check(const Case& c, int threads) {
  const size_t row_bytes = KvRowBytes(c.type, c.head_dim);
  std::vector<uint8_t> k(row_bytes * c.n_keys * c.n_kv_heads), v(k.size());
  const std::vector<float> kf =
      Random(static_cast<size_t>(c.n_keys) * c.n_kv_heads * c.head_dim, 1);
  const std::vector<float> vf = Random(kf.size(), 2);
  for (int i = 0; i < c.n_keys * c.n_kv_heads; ++i) {
    StoreKvRow(c.type, kf.data() + i * c.head_dim, c.head_dim, k.data() + i * row_bytes);
    StoreKvRow(c.type, vf.data() + i * c.head_dim, c.head_dim, v.data() + i * row_bytes);
  }
  KvView kv;
  kv.type = c.type;
  kv.k = k.data();
  kv.v = v.data();
  kv.n_kv_heads = c.n_kv_heads;
  kv.head_dim = c.head_dim;
  kv.n_slots = c.n_keys;
  kv.slot_stride_bytes = row_bytes * c.n_kv_heads;
  kv.head_stride_bytes = row_bytes;
  kv.stored = {0, c.n_keys};

  const size_t row = static_cast<size_t>(c.n_heads) * c.head_dim;
  const std::vector<float> q = Random(c.n_rows * row, 3);  // row-major [rows][heads][hd]
  std::vector<float> want(q.size());
  std::vector<KeyRange> ranges(c.n_rows, c.keys);
  AttentionArgs a;
  a.n_rows = c.n_rows;
  a.n_heads = c.n_heads;
  a.q = q.data();
  a.q_row_stride = a.out_row_stride = row;
  a.out = want.data();
  a.key_ranges = ranges.data();
  a.kv = kv;
  a.scale = 0.7f;
  Attention(a);

  // Head-major copies, with a head stride larger than the rows need.
  const size_t stride = static_cast<size_t>(c.n_rows + 3) * c.head_dim;
  std::vector<float> qh(stride * c.n_heads), out(qh.size(), -7.0f);
  for (int r = 0; r < c.n_rows; ++r) {
    for (int h = 0; h < c.n_heads; ++h) {
      std::copy_n(q.data() + r * row + h * c.head_dim, c.head_dim,
                  qh.data() + h * stride + r * c.head_dim);
    }
  }
  SharedKeysAttentionArgs s;
  s.n_rows = c.n_rows;
  s.n_heads = c.n_heads;
  s.q = qh.data();
  s.out = out.data();
  s.head_stride = stride;
  s.keys = c.keys;
  s.kv = kv;
  s.scale = 0.7f;
  ThreadPool pool(threads);
  AttentionSharedKeys(s, &pool);
  for (int r = 0; r < c.n_rows; ++r) {
    for (int h = 0; h < c.n_heads; ++h) {
      ASSERT_TRUE(BitwiseEqual(want.data() + r * row + h * c.head_dim,
                               out.data() + h * stride + r * c.head_dim, c.head_dim))
          << IsaName(ActiveIsa()) << " " << TensorTypeName(c.type) << " hd " << c.head_dim
          << " row " << r << " head " << h << " threads " << threads;
    }
  }
  EXPECT_EQ(out[c.n_rows * c.head_dim], -7.0f) << "wrote past the rows";
}

TEST(AttentionSharedKeysTest, BitwiseAttentionOnEveryIsaTypeAndThreadCount) {
  const Case cases[] = {
      {TensorType::kF32, 2, 2, 16, 70, 37, {0, 70}},
      {TensorType::kF32, 4, 2, 80, 45, 9, {5, 45}},  // GQA, a padded 72-wide head
      {TensorType::kF32, 3, 1, 64, 33, 8, {0, 33}},
      {TensorType::kF16, 2, 2, 32, 50, 17, {10, 50}},
      {TensorType::kQ8_0, 2, 1, 32, 40, 11, {0, 40}},
  };
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (const Case& c : cases) {
      Check(c, 1);
      Check(c, 2);
    }
  }
}

TEST(AttentionSharedKeysTest, RejectsInconsistentArguments) {
  std::vector<float> k(16 * 16), q(4 * 16), out(q.size());
  SharedKeysAttentionArgs good;
  good.n_rows = 4;
  good.n_heads = 1;
  good.q = q.data();
  good.out = out.data();
  good.head_stride = 4 * 16;
  good.keys = {0, 16};
  good.kv.k = good.kv.v = k.data();
  good.kv.n_kv_heads = 1;
  good.kv.head_dim = 16;
  good.kv.n_slots = 16;
  good.kv.slot_stride_bytes = good.kv.head_stride_bytes = 64;
  good.kv.stored = {0, 16};
  AttentionSharedKeys(good);
  auto error = [](const SharedKeysAttentionArgs& a) {
    try {
      AttentionSharedKeys(a);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SharedKeysAttentionArgs a = good;
  a.keys = {0, 17};
  EXPECT_NE(error(a).find("shared key range [0, 17)"), std::string::npos);
  a = good;
  a.keys = {3, 3};
  EXPECT_NE(error(a).find("is empty"), std::string::npos);
  a = good;
  a.head_stride = 3 * 16;
  EXPECT_NE(error(a).find("head_stride 48"), std::string::npos);
  a = good;
  a.kv.head_dim = 20;
  EXPECT_NE(error(a).find("head_dim 20"), std::string::npos);
  a = good;
  a.n_heads = 0;
  EXPECT_NE(error(a).find("n_heads 0"), std::string::npos);
  a = good;
  a.out = nullptr;
  EXPECT_NE(error(a).find("non-null"), std::string::npos);
}

}  // namespace
}  // namespace tandem::kernels
