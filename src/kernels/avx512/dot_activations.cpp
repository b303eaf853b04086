// AVX-512 activation quantizers for MatMul, bit-exact with tensor/quantize.h's reference ones
// for finite inputs (Q8_0/Q8_1: roundf of x / (amax / 127); Q8_K: nearest-even of
// x * (-127 / signed max), the first element of largest magnitude giving the sign).

// GCC 12 reports its own _mm512_undefined_*() placeholders inside intrinsics as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/dot_avx512.h"

namespace tandem::kernels::avx512 {
namespace {

// f32 -> fp16 (round to nearest even) -> f32: the value a stored fp16 field holds.
inline float ThroughFp16(float v) {
  return _cvtsh_ss(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT));
}

// roundf: round half away from zero, exactly (the fraction v - trunc(v) is exact).
inline __m512 RoundHalfAway(__m512 v) {
  const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
  const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
  const __m512 one = _mm512_castsi512_ps(_mm512_or_si512(
      _mm512_castps_si512(_mm512_set1_ps(1.0f)),
      _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(static_cast<int>(0x80000000u)))));
  return _mm512_mask_add_ps(t, up, t, one);
}

// Stores 16 int32 codes (in -128..127) as bytes; returns their sum.
inline int32_t StoreCodes(__m512i codes, int8_t* out) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(codes));
  return _mm512_reduce_add_epi32(codes);
}

// Q8_0 (and with kSum, Q8_1) blocks of 32.
template <bool kSum>
void QuantizeQ8(const float* x, int64_t cols, const QuantizedRow& out) {
  for (int64_t b = 0; b < cols / 32; ++b) {
    const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
    const float d = amax / 127;
    const __m512 id = _mm512_set1_ps(d != 0 ? 1.0f / d : 0.0f);
    const __m512 lo = _mm512_set1_ps(-128.0f), hi = _mm512_set1_ps(127.0f);
    auto code = [&](__m512 v) {
      const __m512 r = RoundHalfAway(_mm512_mul_ps(v, id));
      return _mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(r, lo), hi));
    };
    const int32_t s0 = StoreCodes(code(v0), out.qs + 32 * b);
    const int32_t s1 = StoreCodes(code(v1), out.qs + 32 * b + 16);
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
    __m512 v[16];
    __m512 amax_v = _mm512_setzero_ps();
    for (int i = 0; i < 16; ++i) {
      v[i] = _mm512_loadu_ps(xb + 16 * i);
      amax_v = _mm512_max_ps(amax_v, _mm512_abs_ps(v[i]));
    }
    const float amax = _mm512_reduce_max_ps(amax_v);
    int8_t* qs = out.qs + 256 * b;
    if (!(amax > 0)) {
      for (int i = 0; i < 16; ++i) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16 * i), _mm_setzero_si128());
        out.sum16[16 * b + i] = 0;
      }
      for (int j = 0; j < 8; ++j) out.sum32[8 * b + j] = 0;
      out.d[b] = 0.0f;
      continue;
    }
    // The first element whose magnitude is amax gives the signed max.
    float max = amax;
    for (int i = 0; i < 16; ++i) {
      const __mmask16 m = _mm512_cmp_ps_mask(_mm512_abs_ps(v[i]), _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (m != 0) {
        max = xb[16 * i + __builtin_ctz(m)];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m512 scale = _mm512_set1_ps(iscale);
    for (int i = 0; i < 16; ++i) {
      // Round to nearest even (the default MXCSR mode), as ggml's nearest_int.
      const __m512i q =
          _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(v[i], scale)), _mm512_set1_epi32(127));
      out.sum16[16 * b + i] = StoreCodes(q, qs + 16 * i);
    }
    for (int j = 0; j < 8; ++j) {
      out.sum32[8 * b + j] = out.sum16[16 * b + 2 * j] + out.sum16[16 * b + 2 * j + 1];
    }
    out.d[b] = 1 / iscale;
  }
}

}  // namespace tandem::kernels::avx512
