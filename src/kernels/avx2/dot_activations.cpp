// AVX2 activation quantizers for MatMul, bit-exact with tensor/quantize.h's reference ones for
// finite inputs (see avx512/dot_activations.cpp for the rules).
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/dot_avx2.h"

namespace tandem::kernels::avx2 {
namespace {

inline float ThroughFp16(float v) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(v), _MM_FROUND_TO_NEAREST_INT)));
}

inline __m256 Abs(__m256 v) {
  return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
}

inline float HorizontalMax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline int32_t HorizontalSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// roundf: round half away from zero, exactly.
inline __m256 RoundHalfAway(__m256 v) {
  const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 frac = Abs(_mm256_sub_ps(v, t));
  const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
  const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(v, _mm256_set1_ps(-0.0f)));
  return _mm256_add_ps(t, _mm256_and_ps(up, one));
}

// Stores 16 int32 codes (two vectors, values in -128..127) as bytes.
inline void StoreCodes16(__m256i lo, __m256i hi, int8_t* out) {
  const __m256i w = _mm256_packs_epi32(lo, hi);  // per lane: lo0-3 hi0-3 | lo4-7 hi4-7
  const __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  // b = lo0-3 hi0-3 lo4-7 hi4-7 as dwords; restore element order.
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi32(b, 0xD8));
}

template <bool kSum>
void QuantizeQ8(const float* x, int64_t cols, const QuantizedRow& out) {
  for (int64_t b = 0; b < cols / 32; ++b) {
    __m256 v[4];
    __m256 amax_v = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(x + 32 * b + 8 * i);
      amax_v = _mm256_max_ps(amax_v, Abs(v[i]));
    }
    const float amax = HorizontalMax(amax_v);
    const float d = amax / 127;
    const __m256 id = _mm256_set1_ps(d != 0 ? 1.0f / d : 0.0f);
    __m256i q[4];
    for (int i = 0; i < 4; ++i) {
      const __m256 r = RoundHalfAway(_mm256_mul_ps(v[i], id));
      q[i] = _mm256_cvttps_epi32(
          _mm256_min_ps(_mm256_max_ps(r, _mm256_set1_ps(-128.0f)), _mm256_set1_ps(127.0f)));
    }
    StoreCodes16(q[0], q[1], out.qs + 32 * b);
    StoreCodes16(q[2], q[3], out.qs + 32 * b + 16);
    const int32_t s0 = HorizontalSum(_mm256_add_epi32(q[0], q[1]));
    const int32_t s1 = HorizontalSum(_mm256_add_epi32(q[2], q[3]));
    out.sum16[2 * b] = s0;
    out.sum16[2 * b + 1] = s1;
    out.sum32[b] = s0 + s1;
    out.d[b] = ThroughFp16(d);
    if constexpr (kSum) out.s[b] = ThroughFp16(static_cast<float>(s0 + s1) * d);
  }
}

}  // namespace

void QuantizeActivationsQ8_0(const float* x, int64_t cols, const QuantizedRow& out) {
  QuantizeQ8<false>(x, cols, out);
}

void QuantizeActivationsQ8_1(const float* x, int64_t cols, const QuantizedRow& out) {
  QuantizeQ8<true>(x, cols, out);
}

void QuantizeActivationsQ8_K(const float* x, int64_t cols, const QuantizedRow& out) {
  for (int64_t b = 0; b < cols / 256; ++b) {
    const float* xb = x + 256 * b;
    __m256 amax_v = _mm256_setzero_ps();
    for (int i = 0; i < 32; ++i) amax_v = _mm256_max_ps(amax_v, Abs(_mm256_loadu_ps(xb + 8 * i)));
    const float amax = HorizontalMax(amax_v);
    int8_t* qs = out.qs + 256 * b;
    if (!(amax > 0)) {
      for (int i = 0; i < 256; ++i) qs[i] = 0;
      for (int k = 0; k < 16; ++k) out.sum16[16 * b + k] = 0;
      for (int j = 0; j < 8; ++j) out.sum32[8 * b + j] = 0;
      out.d[b] = 0.0f;
      continue;
    }
    float max = amax;  // the first element of largest magnitude gives the sign
    for (int i = 0; i < 32; ++i) {
      const __m256 eq =
          _mm256_cmp_ps(Abs(_mm256_loadu_ps(xb + 8 * i)), _mm256_set1_ps(amax), _CMP_EQ_OQ);
      const int m = _mm256_movemask_ps(eq);
      if (m != 0) {
        max = xb[8 * i + __builtin_ctz(static_cast<unsigned>(m))];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m256 scale = _mm256_set1_ps(iscale);
    for (int k = 0; k < 16; ++k) {
      __m256i q[2];
      for (int h = 0; h < 2; ++h) {
        // Round to nearest even (the default MXCSR mode), as ggml's nearest_int.
        q[h] = _mm256_min_epi32(
            _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(xb + 16 * k + 8 * h), scale)),
            _mm256_set1_epi32(127));
      }
      StoreCodes16(q[0], q[1], qs + 16 * k);
      out.sum16[16 * b + k] = HorizontalSum(_mm256_add_epi32(q[0], q[1]));
    }
    for (int j = 0; j < 8; ++j) {
      out.sum32[8 * b + j] = out.sum16[16 * b + 2 * j] + out.sum16[16 * b + 2 * j + 1];
    }
    out.d[b] = 1 / iscale;
  }
}

}  // namespace tandem::kernels::avx2
