// Is the read-bandwidth probe honest? The probe `tandem bench` sets decoding against
// (kernels/machine_limits.h) beside every other way of reading memory we tried: other ISA paths,
// software prefetch at several distances and levels, several streams per thread, another split
// of the buffer between threads, 4 KiB pages, one thread, and the decode itself (a one-row MatMul
// over a packed Q4_0 matrix larger than the last-level cache). The variants run interleaved,
// round after round, so a drift of a shared machine's speed hits them alike; each reports its
// best round and its ratio to the probe's best. A variant well above 1.00 means the probe
// understates what the machine can read.
//
//   bench_membw [ROUNDS=12] [MIB=1024]
// GCC 12 reports its own AVX-512 intrinsics' _mm512_undefined_*() as (maybe-)uninitialized
// (GCC bug 105593), inside the header: silenced there, as kernels/avx512/vec_avx512.h does.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/huge_page_allocator.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/machine_limits.h"
#include "kernels/matmul.h"
#include "kernels/matmul_repack.h"
#include "tensor/quantize.h"
#include "tensor/type_traits.h"

namespace tandem::bench {
namespace {

// The wrapping sum of v's eight 64-bit lanes.
__attribute__((target("avx512f"))) inline uint64_t SumLanes(__m512i v) {
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, v);
  uint64_t s = 0;
  for (uint64_t x : lanes) s += x;
  return s;
}

using ReadFn = uint64_t (*)(const unsigned char* p, size_t bytes);

// 512-bit loads with a software prefetch DIST bytes ahead (HINT: _MM_HINT_T0 or _MM_HINT_T1).
template <int DIST, int HINT>
__attribute__((target("avx512f"))) uint64_t PrefetchRead512(const unsigned char* p, size_t bytes) {
  const __m512i* v = reinterpret_cast<const __m512i*>(p);
  __m512i a0 = _mm512_set1_epi64(0), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 64; i += 4) {
    const char* ahead = reinterpret_cast<const char*>(v + i) + DIST;
    for (int k = 0; k < 4; ++k) _mm_prefetch(ahead + 64 * k, static_cast<_mm_hint>(HINT));
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(v + i));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(v + i + 1));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(v + i + 2));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(v + i + 3));
  }
  return SumLanes(_mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
}

// 512-bit loads from S streams at once (the share cut into S parts read side by side), as a
// packed tile reads several row groups.
template <int S>
__attribute__((target("avx512f"))) uint64_t StreamsRead512(const unsigned char* p, size_t bytes) {
  const __m512i* v = reinterpret_cast<const __m512i*>(p);
  const size_t per = bytes / 64 / S;
  __m512i acc[S];
  for (auto& a : acc) a = _mm512_set1_epi64(0);
  for (size_t i = 0; i < per; i += 2) {
    for (int s = 0; s < S; ++s) {
      acc[s] = _mm512_add_epi64(acc[s], _mm512_load_si512(v + s * per + i));
      acc[s] = _mm512_add_epi64(acc[s], _mm512_load_si512(v + s * per + i + 1));
    }
  }
  __m512i sum = acc[0];
  for (int s = 1; s < S; ++s) sum = _mm512_add_epi64(sum, acc[s]);
  return SumLanes(sum);
}

// 512-bit loads from two streams that hop: the share read as pairs of SEG-byte segments side by
// side, then the next pair (the packed decode's two 16-row groups at a time).
template <int SEG>
__attribute__((target("avx512f"))) uint64_t PairsRead512(const unsigned char* p, size_t bytes) {
  __m512i a0 = _mm512_set1_epi64(0), a1 = a0;
  for (size_t pair = 0; pair + 2 * SEG <= bytes; pair += 2 * SEG) {
    const __m512i* s0 = reinterpret_cast<const __m512i*>(p + pair);
    const __m512i* s1 = reinterpret_cast<const __m512i*>(p + pair + SEG);
    for (int i = 0; i < SEG / 64; ++i) {
      a0 = _mm512_add_epi64(a0, _mm512_load_si512(s0 + i));
      a1 = _mm512_add_epi64(a1, _mm512_load_si512(s1 + i));
    }
  }
  return SumLanes(_mm512_add_epi64(a0, a1));
}

// 256-bit loads with a software prefetch DIST bytes ahead, for machines without AVX-512.
template <int DIST>
__attribute__((target("avx2"))) uint64_t PrefetchRead256(const unsigned char* p, size_t bytes) {
  const __m256i* v = reinterpret_cast<const __m256i*>(p);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0;
  for (size_t i = 0; i < bytes / 32; i += 4) {
    const char* ahead = reinterpret_cast<const char*>(v + i) + DIST;
    _mm_prefetch(ahead, _MM_HINT_T0);
    _mm_prefetch(ahead + 64, _MM_HINT_T0);
    a0 = _mm256_add_epi64(a0,
                          _mm256_add_epi64(_mm256_load_si256(v + i), _mm256_load_si256(v + i + 2)));
    a1 = _mm256_add_epi64(
        a1, _mm256_add_epi64(_mm256_load_si256(v + i + 1), _mm256_load_si256(v + i + 3)));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_add_epi64(a0, a1));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// Bytes a variant reads.
struct Region {
  const unsigned char* data;
  size_t bytes;
};

// A buffer of `bytes`, every byte 1, in huge pages or (huge = false) in 4 KiB pages.
struct Buffer {
  unsigned char* data;
  size_t bytes;
  bool huge;
  Buffer(size_t n, bool huge_pages) : bytes(n), huge(huge_pages) {
    data = static_cast<unsigned char*>(
        mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (data == MAP_FAILED) std::abort();
    madvise(data, n, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    std::memset(data, 1, n);
  }
  ~Buffer() { munmap(data, bytes); }
};

constexpr size_t kChunk = size_t{1} << 20;

// Reads `b` with `read` over `pool`: contiguous shares, or (interleaved) 1 MiB chunks dealt out
// round-robin. Returns seconds.
double TimeRead(const Region& b, ReadFn read, ThreadPool& pool, bool interleaved) {
  std::vector<uint64_t> sums(pool.size());
  const size_t chunks = b.bytes / kChunk;
  const auto t0 = std::chrono::steady_clock::now();
  pool.ParallelForRange(pool.size(), [&](size_t, size_t, int t) {
    if (interleaved) {
      for (size_t c = t; c < chunks; c += pool.size()) sums[t] += read(b.data + c * kChunk, kChunk);
    } else {
      const size_t per = chunks / pool.size() * kChunk;
      sums[t] += read(b.data + t * per, per);
    }
  });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  volatile uint64_t sink = 0;
  for (uint64_t v : sums) sink = sink + v;
  return s;
}

struct Variant {
  std::string name;
  std::function<double()> bytes_per_second;  // one round
  double best = 0;
};

int Main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 12;
  const size_t bytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1024) << 20;
  const CpuFeatures& f = HostCpuFeatures();
  ThreadPool pool(0), one(1);
  kernels::ReadBuffer probe_buffer(bytes);
  const Buffer small_pages(bytes, false);
  // The variants in huge pages read the probe's own buffer: only the way of reading differs.
  const Region huge{probe_buffer.data(), probe_buffer.bytes()},
      small{small_pages.data, small_pages.bytes};

  std::vector<Variant> v;
  auto probe_on = [&](kernels::Isa isa, ThreadPool& p) {
    return [&, isa, pp = &p] {
      const kernels::Isa saved = kernels::ActiveIsa();
      kernels::SetActiveIsa(isa);
      const auto t0 = std::chrono::steady_clock::now();
      volatile unsigned long long sink = probe_buffer.ReadAll(*pp);
      (void)sink;
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      kernels::SetActiveIsa(saved);
      return probe_buffer.bytes() / s;
    };
  };
  auto read = [&](const Region& b, ReadFn fn, ThreadPool& p, bool interleaved) {
    return [b, fn, pp = &p, interleaved] { return b.bytes / TimeRead(b, fn, *pp, interleaved); };
  };
  const kernels::Isa active = kernels::ActiveIsa();
  v.push_back({"probe (" + std::string(kernels::IsaName(active)) + ")", probe_on(active, pool)});
  for (kernels::Isa isa : kernels::SupportedIsas()) {
    if (isa != active) {
      v.push_back(
          {"probe on the " + std::string(kernels::IsaName(isa)) + " path", probe_on(isa, pool)});
    }
  }
  v.push_back({"probe, one thread", probe_on(active, one)});
  if (f.HasAvx512Tier()) {
    v.push_back(
        {"prefetch T0 +1 KiB", read(huge, PrefetchRead512<1024, _MM_HINT_T0>, pool, false)});
    v.push_back(
        {"prefetch T0 +16 KiB", read(huge, PrefetchRead512<16384, _MM_HINT_T0>, pool, false)});
    v.push_back(
        {"prefetch T1 +8 KiB", read(huge, PrefetchRead512<8192, _MM_HINT_T1>, pool, false)});
    v.push_back({"2 streams per thread", read(huge, StreamsRead512<2>, pool, false)});
    v.push_back({"8 streams per thread", read(huge, StreamsRead512<8>, pool, false)});
    v.push_back({"2 streams hopping every 18 KiB", read(huge, PairsRead512<18432>, pool, false)});
    v.push_back({"2 streams hopping every 4.5 KiB", read(huge, PairsRead512<4608>, pool, false)});
    v.push_back({"1 MiB chunks round-robin", read(huge, StreamsRead512<1>, pool, true)});
    v.push_back({"4 KiB pages", read(small, StreamsRead512<1>, pool, false)});
  } else if (f.HasAvx2Tier()) {
    v.push_back({"prefetch T0 +1 KiB", read(huge, PrefetchRead256<1024>, pool, false)});
    v.push_back({"prefetch T0 +16 KiB", read(huge, PrefetchRead256<16384>, pool, false)});
    v.push_back({"1 MiB chunks round-robin", read(huge, PrefetchRead256<0>, pool, true)});
    v.push_back({"4 KiB pages", read(small, PrefetchRead256<0>, pool, false)});
  }

  // The decode's own read: one row through a packed Q4_0 matrix of about `bytes`.
  const int64_t cols = 2048, row_bytes = QuantizedRowBytes(TensorType::kQ4_0, cols);
  const int64_t rows = static_cast<int64_t>(bytes) / row_bytes / 64 * 64;
  std::vector<uint8_t, HugePageAllocator<uint8_t>> q(rows * row_bytes);
  {
    std::mt19937 rng(1);
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> row(cols);
    for (int64_t r = 0; r < std::min<int64_t>(rows, 64); ++r) {
      for (float& x : row) x = normal(rng);
      QuantizeRow(TensorType::kQ4_0, row.data(), q.data() + r * row_bytes, cols);
    }
    for (int64_t r = 64; r < rows; ++r) {
      std::memcpy(q.data() + r * row_bytes, q.data() + (r % 64) * row_bytes, row_bytes);
    }
  }
  kernels::WeightMatrix w = kernels::DenseWeightMatrix(TensorType::kQ4_0, q.data(), rows, cols);
  std::unique_ptr<kernels::PackedMatrix> packed;
  if (kernels::MatMulReadsPacked(TensorType::kQ4_0)) {
    packed = std::make_unique<kernels::PackedMatrix>(kernels::PackWeightMatrix(w));
    w = packed->Attach(w);
    q.clear();
    q.shrink_to_fit();
  }
  std::vector<float> x(cols, 0.5f), y(rows);
  const double matrix_bytes = static_cast<double>(rows * row_bytes);
  v.push_back(
      {"decode: matvec over packed Q4_0", [&] {
         const auto t0 = std::chrono::steady_clock::now();
         kernels::MatMul(w, x.data(), 1, y.data(), pool);
         return matrix_bytes /
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
       }});

  for (Variant& var : v) var.bytes_per_second();  // warm: page tables, caches, clocks
  for (int r = 0; r < rounds; ++r) {
    for (Variant& var : v) var.best = std::max(var.best, var.bytes_per_second());
  }
  std::printf("CPU %s | active path %s | %d threads | %zu MiB | best of %d interleaved rounds\n",
              f.ToString().c_str(), std::string(kernels::IsaName(active)).c_str(), pool.size(),
              bytes >> 20, rounds);
  std::printf("%-34s %9s %9s\n", "variant", "GB/s", "vs probe");
  for (const Variant& var : v) {
    std::printf("%-34s %9.1f %8.2fx\n", var.name.c_str(), var.best / 1e9, var.best / v[0].best);
  }
  return 0;
}

}  // namespace
}  // namespace tandem::bench

int main(int argc, char** argv) {
  return tandem::bench::Main(argc, argv);
}
