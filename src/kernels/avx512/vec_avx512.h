// The AVX-512 vector trait (simd/vec_trait.h): 16 f32 lanes in a zmm register (AVX-512 F, BW,
// DQ, VL), masks in k registers. Only AVX-512 translation units include this.
#pragma once

// GCC 12 reports its own AVX-512 intrinsics' _mm512_undefined_*() as (maybe-)uninitialized
// (GCC bug 105593); the warning's location is inside the header, so silence it there.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <cstdint>

#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::avx512 {

struct F32x16 {
  using V = __m512;
  using VD = __m512d;
  using VI = __m512i;
  using M = __mmask16;
  using Bytes16 = __m128i;
  static constexpr int kLanes = 16;
  static constexpr int kRegisters = 32;
  static constexpr int kPer16 = 1;

  static V Zero() { return _mm512_setzero_ps(); }
  static V Set1(float f) { return _mm512_set1_ps(f); }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static V LoadAligned(const float* p) { return _mm512_load_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static void StoreAligned(float* p, V v) { _mm512_store_ps(p, v); }
  static V LoadF16(const void* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
  }
  static V LoadBF16(const void* p) {
    return WidenBF16(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
  }
  static float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }
  static uint16_t FloatToHalf(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
  static void StoreHalves(V v, uint16_t* p) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }

  static M FirstN(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static V MaskLoad(M m, const float* p) { return _mm512_maskz_loadu_ps(m, p); }
  static V MaskLoadOr(V fallback, M m, const float* p) {
    return _mm512_mask_loadu_ps(fallback, m, p);
  }
  static void MaskStore(M m, float* p, V v) { _mm512_mask_storeu_ps(p, m, v); }
  static V LoadPartialF16(const void* p, int n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(FirstN(n), p));
  }
  static V LoadPartialBF16(const void* p, int n) {
    return WidenBF16(_mm256_maskz_loadu_epi16(FirstN(n), p));
  }

  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  static V Min(V a, V b) { return _mm512_min_ps(a, b); }
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V MulAdd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V NegMulAdd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V Abs(V v) { return _mm512_abs_ps(v); }
  static V CopySignToAbs(V abs, V sign) {
    const __m512i s = _mm512_and_si512(_mm512_castps_si512(sign), _mm512_set1_epi32(INT32_MIN));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(abs), s));
  }
  static V RoundNearest(V v) {
    return _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static V Trunc(V v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  static V MulPow2(V a, V b) { return _mm512_scalef_ps(a, b); }

  static M Lt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static M Gt(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static M Ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static M Eq(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  static V IfThenElse(M m, V yes, V no) { return _mm512_mask_mov_ps(no, m, yes); }
  static V IfThenElseZero(M m, V v) { return _mm512_maskz_mov_ps(m, v); }
  static V IfThenZeroElse(M m, V v) { return _mm512_maskz_mov_ps(static_cast<M>(~m), v); }
  static V AddIf(M m, V a, V b) { return _mm512_mask_add_ps(a, m, a, b); }
  static unsigned MaskBits(M m) { return m; }

  // Halves down to 128 bits, then pairs, then the last two lanes.
  static float ReduceSum(V v) {
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v), UpperHalf(v));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // ReduceSum's tree is: lanes (i, i + 8), then (i, i + 4), (i, i + 2), (i, i + 1). Each level
  // below pairs the same lanes for all 16 vectors at once.
  static V SumEach(const V* v) {
    // (i, i + 8): w[k] = [v[2k] halves added | v[2k + 1] halves added].
    V w[8];
    for (int k = 0; k < 8; ++k) {
      const V lo = _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0x44);  // 128-bit lanes 0,1 | 0,1
      const V hi = _mm512_shuffle_f32x4(v[2 * k], v[2 * k + 1], 0xEE);  // 2,3 | 2,3
      w[k] = _mm512_add_ps(lo, hi);
    }
    // (i, i + 4): x[k] = the 4-lane partials of v[4k .. 4k + 3], in that order.
    V x[4];
    for (int k = 0; k < 4; ++k) {
      const V a = _mm512_shuffle_f32x4(w[2 * k], w[2 * k + 1], 0x88);  // 128-bit lanes 0,2 | 0,2
      const V b = _mm512_shuffle_f32x4(w[2 * k], w[2 * k + 1], 0xDD);  // 1,3 | 1,3
      x[k] = _mm512_add_ps(a, b);
    }
    // (i, i + 2): y[k] per 128-bit lane t: [2 lanes of v[4·2k + t] | 2 of v[4·(2k + 1) + t]].
    V y[2];
    for (int k = 0; k < 2; ++k) {
      const __m512d a = _mm512_castps_pd(x[2 * k]), b = _mm512_castps_pd(x[2 * k + 1]);
      y[k] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(a, b)),
                           _mm512_castpd_ps(_mm512_unpackhi_pd(a, b)));
    }
    // (i, i + 1): 128-bit lane t holds v[t], v[4 + t], v[8 + t], v[12 + t].
    const V z =
        _mm512_add_ps(_mm512_shuffle_ps(y[0], y[1], 0x88), _mm512_shuffle_ps(y[0], y[1], 0xDD));
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_permutexvar_ps(order, z);
  }
  static float ReduceMax(V v) {
    const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v), UpperHalf(v));
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  static VD ZeroD() { return _mm512_setzero_pd(); }
  static VD AddD(VD a, VD b) { return _mm512_add_pd(a, b); }
  static VD PromoteLower(V v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
  static VD PromoteUpper(V v) { return _mm512_cvtps_pd(UpperHalf(v)); }
  static double ReduceSumD(VD v) {
    const __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
  }

  static VI ConvertNearest(V v) { return _mm512_cvtps_epi32(v); }
  static VI ConvertTrunc(V v) { return _mm512_cvttps_epi32(v); }
  static VI MinI32(VI v, int32_t c) { return _mm512_min_epi32(v, _mm512_set1_epi32(c)); }
  static VI AddI32(VI a, VI b) { return _mm512_add_epi32(a, b); }
  static int32_t ReduceSumI32(VI v) { return _mm512_reduce_add_epi32(v); }

  static void I8x16ToF32(Bytes16 q, V out[1]) {
    out[0] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q));
  }
  static void StoreI8x16(const VI codes[1], int8_t* out) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(codes[0]));
  }

 private:
  static __m256 UpperHalf(V v) {
    return _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  }
  static V WidenBF16(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
};
static_assert(simd::VecTrait<F32x16>);

}  // namespace tandem::kernels::avx512
