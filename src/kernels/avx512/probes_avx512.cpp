// The probes with AVX-512 (probes_isa.h): 512-bit loads; vpdpbusd, the VNNI instruction the
// AVX-512 quantized dot kernels multiply int8 blocks with (without VNNI those kernels are AVX2's,
// and so is this probe).
#include "kernels/avx512/vec_avx512.h"

#include "base/cpu_features.h"
#include "kernels/probes_isa.h"

namespace tandem::kernels::avx512 {
namespace {

constexpr int kPrefetchBytes = 4096;

// The wrapping sum of v's eight 64-bit lanes.
inline uint64_t SumLanes(__m512i v) {
  alignas(64) uint64_t lanes[8];
  _mm512_store_si512(lanes, v);
  uint64_t s = 0;
  for (uint64_t x : lanes) s += x;
  return s;
}

}  // namespace

uint64_t ReadSum(const void* p, size_t bytes) {
  const __m512i* v = static_cast<const __m512i*>(p);
  __m512i a0 = _mm512_set1_epi64(0), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 64; i += 4) {
    // 4 KiB ahead: with the hardware prefetchers alone the probe read less than other ways of
    // reading do (bench_membw compares them). Prefetching past the end never faults.
    const char* ahead = reinterpret_cast<const char*>(v + i) + kPrefetchBytes;
    for (int k = 0; k < 4; ++k) _mm_prefetch(ahead + 64 * k, _MM_HINT_T0);
    a0 = _mm512_add_epi64(a0, _mm512_load_si512(v + i));
    a1 = _mm512_add_epi64(a1, _mm512_load_si512(v + i + 1));
    a2 = _mm512_add_epi64(a2, _mm512_load_si512(v + i + 2));
    a3 = _mm512_add_epi64(a3, _mm512_load_si512(v + i + 3));
  }
  return SumLanes(_mm512_add_epi64(_mm512_add_epi64(a0, a1), _mm512_add_epi64(a2, a3)));
}

int64_t Int8MultiplyAdds(int64_t rounds, int32_t* sum) {
  if (!HostCpuFeatures().avx512vnni) return avx2::Int8MultiplyAdds(rounds, sum);
  // Enough independent chains to cover vpdpbusd's latency at two issues per cycle.
  constexpr int kAcc = 16;
  __m512i acc[kAcc];
  for (__m512i& x : acc) x = _mm512_set1_epi64(0);
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-5);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_dpbusd_epi32(acc[k], a, b);
    __asm__ volatile("" : "+v"(a), "+v"(b));  // the operands are unknown to the compiler
  }
  __m512i s = acc[0];
  for (int k = 1; k < kAcc; ++k) s = _mm512_add_epi32(s, acc[k]);
  *sum = _mm512_reduce_add_epi32(s);
  return rounds * kAcc * 64;
}

}  // namespace tandem::kernels::avx512
