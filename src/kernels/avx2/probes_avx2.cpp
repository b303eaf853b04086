// The probes with AVX2 (probes_isa.h): 256-bit loads; vpmaddubsw + vpmaddwd, the pair the AVX2
// quantized dot kernels multiply int8 blocks with.
#include <immintrin.h>

#include "kernels/probes_isa.h"

namespace tandem::kernels::avx2 {

uint64_t ReadSum(const void* p, size_t bytes) {
  const __m256i* v = static_cast<const __m256i*>(p);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < bytes / 32; i += 8) {
    // 4 KiB ahead, as the AVX-512 probe (probes_avx512.cpp). Prefetching never faults.
    const char* ahead = reinterpret_cast<const char*>(v + i) + 4096;
    for (int k = 0; k < 4; ++k) _mm_prefetch(ahead + 64 * k, _MM_HINT_T0);
    a0 = _mm256_add_epi64(a0,
                          _mm256_add_epi64(_mm256_load_si256(v + i), _mm256_load_si256(v + i + 4)));
    a1 = _mm256_add_epi64(
        a1, _mm256_add_epi64(_mm256_load_si256(v + i + 1), _mm256_load_si256(v + i + 5)));
    a2 = _mm256_add_epi64(
        a2, _mm256_add_epi64(_mm256_load_si256(v + i + 2), _mm256_load_si256(v + i + 6)));
    a3 = _mm256_add_epi64(
        a3, _mm256_add_epi64(_mm256_load_si256(v + i + 3), _mm256_load_si256(v + i + 7)));
  }
  const __m256i s = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

int64_t Int8MultiplyAdds(int64_t rounds, int32_t* sum) {
  // Enough independent chains to cover the pair's latency at two issues per cycle.
  constexpr int kAcc = 8;
  __m256i acc[kAcc];
  for (__m256i& x : acc) x = _mm256_setzero_si256();
  __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-5);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 8
    for (int k = 0; k < kAcc; ++k) {
      acc[k] = _mm256_add_epi32(acc[k], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
    }
    __asm__ volatile("" : "+x"(a), "+x"(b));  // the operands are unknown to the compiler
  }
  __m256i s = acc[0];
  for (int k = 1; k < kAcc; ++k) s = _mm256_add_epi32(s, acc[k]);
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
  uint32_t total = 0;
  for (int32_t v : lanes) total += static_cast<uint32_t>(v);
  *sum = static_cast<int32_t>(total);
  return rounds * kAcc * 32;
}

}  // namespace tandem::kernels::avx2
