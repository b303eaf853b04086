// The AVX2 vector trait (simd/vec_trait.h): 8 f32 lanes in a ymm register, with FMA and F16C.
// Masks are vectors of all-ones / all-zeros lanes. Only AVX2 translation units include this.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::avx2 {

struct F32x8 {
  using V = __m256;
  using VD = __m256d;
  using VI = __m256i;
  using M = __m256;
  using Bytes16 = __m128i;
  static constexpr int kLanes = 8;
  static constexpr int kRegisters = 16;
  static constexpr int kPer16 = 2;

  static V Zero() { return _mm256_setzero_ps(); }
  static V Set1(float f) { return _mm256_set1_ps(f); }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static V LoadAligned(const float* p) { return _mm256_load_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static void StoreAligned(float* p, V v) { _mm256_store_ps(p, v); }
  static V LoadF16(const void* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p)));
  }
  static V LoadBF16(const void* p) {
    return WidenBF16(_mm_loadu_si128(static_cast<const __m128i*>(p)));
  }
  static float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }
  static uint16_t FloatToHalf(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
  static void StoreHalves(V v, uint16_t* p) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }

  static M FirstN(int64_t n) {
    const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), index));
  }
  static V MaskLoad(M m, const float* p) { return _mm256_maskload_ps(p, _mm256_castps_si256(m)); }
  static V MaskLoadOr(V fallback, M m, const float* p) {
    return _mm256_blendv_ps(fallback, MaskLoad(m, p), m);
  }
  static void MaskStore(M m, float* p, V v) { _mm256_maskstore_ps(p, _mm256_castps_si256(m), v); }
  // No 16-bit masked loads in AVX2: the n values go through a zero-padded buffer.
  static V LoadPartialF16(const void* p, int n) { return _mm256_cvtph_ps(LoadPartial16(p, n)); }
  static V LoadPartialBF16(const void* p, int n) { return WidenBF16(LoadPartial16(p, n)); }

  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Min(V a, V b) { return _mm256_min_ps(a, b); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
  static V MulAdd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V NegMulAdd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V Abs(V v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
  static V CopySignToAbs(V abs, V sign) {
    return _mm256_or_ps(abs, _mm256_and_ps(sign, _mm256_set1_ps(-0.0f)));
  }
  static V RoundNearest(V v) {
    return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  static V Trunc(V v) { return _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
  // The exponent field built from b, then one multiply.
  static V MulPow2(V a, V b) {
    const __m256i bits =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(b), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(a, _mm256_castsi256_ps(bits));
  }

  static M Lt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static M Gt(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static M Ge(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static M Eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
  static V IfThenElse(M m, V yes, V no) { return _mm256_blendv_ps(no, yes, m); }
  static V IfThenElseZero(M m, V v) { return _mm256_and_ps(m, v); }
  static V IfThenZeroElse(M m, V v) { return _mm256_andnot_ps(m, v); }
  static V AddIf(M m, V a, V b) { return _mm256_add_ps(a, _mm256_and_ps(m, b)); }
  static unsigned MaskBits(M m) { return static_cast<unsigned>(_mm256_movemask_ps(m)); }

  // Halves, then pairs, then the last two lanes.
  static float ReduceSum(V v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  // ReduceSum's tree is: lanes (i, i + 4), then (i, i + 2), (i, i + 1). Each level below pairs
  // the same lanes for all 8 vectors at once.
  static V SumEach(const V* v) {
    // (i, i + 4): w[k] = [v[2k] halves added | v[2k + 1] halves added].
    V w[4];
    for (int k = 0; k < 4; ++k) {
      w[k] = _mm256_add_ps(_mm256_permute2f128_ps(v[2 * k], v[2 * k + 1], 0x20),
                           _mm256_permute2f128_ps(v[2 * k], v[2 * k + 1], 0x31));
    }
    // (i, i + 2): x[k] per 128-bit lane t: [2 lanes of v[4k + t] | 2 of v[4k + 2 + t]].
    V x[2];
    for (int k = 0; k < 2; ++k) {
      const __m256d a = _mm256_castps_pd(w[2 * k]), b = _mm256_castps_pd(w[2 * k + 1]);
      x[k] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(a, b)),
                           _mm256_castpd_ps(_mm256_unpackhi_pd(a, b)));
    }
    // (i, i + 1): 128-bit lane t holds v[t], v[2 + t], v[4 + t], v[6 + t].
    const V z =
        _mm256_add_ps(_mm256_shuffle_ps(x[0], x[1], 0x88), _mm256_shuffle_ps(x[0], x[1], 0xDD));
    return _mm256_permutevar8x32_ps(z, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  }
  static float ReduceMax(V v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }

  static VD ZeroD() { return _mm256_setzero_pd(); }
  static VD AddD(VD a, VD b) { return _mm256_add_pd(a, b); }
  static VD PromoteLower(V v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
  static VD PromoteUpper(V v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
  static double ReduceSumD(VD v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
  }

  static VI ConvertNearest(V v) { return _mm256_cvtps_epi32(v); }
  static VI ConvertTrunc(V v) { return _mm256_cvttps_epi32(v); }
  static VI MinI32(VI v, int32_t c) { return _mm256_min_epi32(v, _mm256_set1_epi32(c)); }
  static VI AddI32(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static int32_t ReduceSumI32(VI v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
  }

  static void I8x16ToF32(Bytes16 q, V out[2]) {
    out[0] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q));
    out[1] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8)));
  }
  static void StoreI8x16(const VI codes[2], int8_t* out) {
    const __m256i w = _mm256_packs_epi32(codes[0], codes[1]);  // lo0-3 hi0-3 | lo4-7 hi4-7
    const __m128i b = _mm_packs_epi16(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    // b = lo0-3 hi0-3 lo4-7 hi4-7 as dwords; restore element order.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_shuffle_epi32(b, 0xD8));
  }

 private:
  static V WidenBF16(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static __m128i LoadPartial16(const void* p, int n) {
    alignas(16) uint16_t buf[8] = {};
    std::memcpy(buf, p, n * sizeof(uint16_t));
    return _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
  }
};
static_assert(simd::VecTrait<F32x8>);

}  // namespace tandem::kernels::avx2
