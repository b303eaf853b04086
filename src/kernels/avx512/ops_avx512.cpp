// AVX-512 row ops. Vectors of 16 lanes; the last partial vector of a row goes through the same
// vector code with masked loads/stores, so an element's result never depends on its index.
// Reductions: fixed lane accumulators, combined in a fixed order at the end of the row.
// GCC 12 reports its own AVX-512 intrinsics' _mm512_undefined_*() as (maybe-)uninitialized
// (GCC bug 105593); the warning's location is inside the header, so silence it there.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cmath>
#include <cstdint>

#include "kernels/ops_isa.h"

namespace tandem::kernels::avx512 {
namespace {

constexpr int kLanes = 16;

// Lanes [0, k) set, for a partial vector of k < 16 elements.
inline __mmask16 TailMask(int64_t k) {
  return static_cast<__mmask16>((1u << k) - 1u);
}

// Sum of the 16 lanes, in a fixed order.
inline float HorizontalSum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline double HorizontalSum(__m512d v) {
  const __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
  s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
  return _mm_cvtsd_f64(s);
}

// acc += the 16 lanes of v widened to double (lanes 0-7 to acc[0], 8-15 to acc[1]).
inline void AccumulateDouble(__m512 v, __m512d acc[2]) {
  acc[0] = _mm512_add_pd(acc[0], _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  acc[1] = _mm512_add_pd(
      acc[1], _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

inline float HorizontalMax(__m512 v) {
  const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// e^x, relative error a few ulp. x < -87 gives 0, x > 88.72 gives +inf; NaN stays NaN.
// x = n·ln2 + r with |r| <= ln2/2; e^r by its Taylor series to degree 7 (truncation < 1e-8).
inline __m512 Exp16(__m512 x) {
  const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.0f), _CMP_NLT_UQ);
  const __mmask16 too_large = _mm512_cmp_ps_mask(x, _mm512_set1_ps(88.72f), _CMP_GT_OQ);
  x = _mm512_min_ps(_mm512_set1_ps(88.0f), _mm512_max_ps(_mm512_set1_ps(-87.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);  // ln2, high bits
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.428606820309417e-6f), r);      // ln2, low bits
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512 y = _mm512_maskz_mov_ps(keep, _mm512_scalef_ps(p, n));
  return _mm512_mask_mov_ps(y, too_large, _mm512_set1_ps(INFINITY));
}

// tanh(u), error a few ulp: odd Taylor polynomial (to u¹¹) for |u| < 0.25, else
// (e - 1)/(e + 1) with e = exp(2|u|); |u| is clamped to 9, where tanh is 1 in f32.
inline __m512 Tanh16(__m512 u) {
  const __m512 a = _mm512_min_ps(_mm512_set1_ps(9.0f), _mm512_abs_ps(u));
  const __m512 e = Exp16(_mm512_add_ps(a, a));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 big = _mm512_div_ps(_mm512_sub_ps(e, one), _mm512_add_ps(e, one));
  const __m512 a2 = _mm512_mul_ps(a, a);
  __m512 p = _mm512_set1_ps(-1382.0f / 155925.0f);
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(62.0f / 2835.0f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(-17.0f / 315.0f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(2.0f / 15.0f));
  p = _mm512_fmadd_ps(p, a2, _mm512_set1_ps(-1.0f / 3.0f));
  const __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, a2), a, a);
  const __mmask16 is_small = _mm512_cmp_ps_mask(a, _mm512_set1_ps(0.25f), _CMP_LT_OQ);
  const __m512 t = _mm512_mask_mov_ps(big, is_small, small);
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(u), _mm512_set1_epi32(INT32_MIN));
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(t), sign));
}

// 0.5·x·(1 + tanh u), u = sqrt(2/π)·(x + 0.044715·x³), as x / (1 + e^(-2u)) (no cancellation).
inline __m512 Gelu16(__m512 x) {
  const __m512 x3 = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.044715f), x), x), x);
  const __m512 u = _mm512_mul_ps(_mm512_set1_ps(0.7978845608028654f), _mm512_add_ps(x, x3));
  const __m512 e = Exp16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), u));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

// Applies f (one __m512 -> __m512) to x[0..n) -> y, the tail through masked loads/stores.
template <typename F>
inline void Map(const float* x, int64_t n, float* y, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  if (i < n) {
    const __mmask16 mask = TailMask(n - i);
    _mm512_mask_storeu_ps(y + i, mask, f(_mm512_maskz_loadu_ps(mask, x + i)));
  }
}

}  // namespace

void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  __m512 acc2 = _mm512_setzero_ps(), acc3 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
    const __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
    acc0 = _mm512_fmadd_ps(v0, v0, acc0);
    acc1 = _mm512_fmadd_ps(v1, v1, acc1);
    acc2 = _mm512_fmadd_ps(v2, v2, acc2);
    acc3 = _mm512_fmadd_ps(v3, v3, acc3);
  }
  for (; i + kLanes <= n; i += kLanes) {
    const __m512 v = _mm512_loadu_ps(x + i);
    acc0 = _mm512_fmadd_ps(v, v, acc0);
  }
  if (i < n) {
    const __m512 v = _mm512_maskz_loadu_ps(TailMask(n - i), x + i);
    acc0 = _mm512_fmadd_ps(v, v, acc0);
  }
  const float sum =
      HorizontalSum(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)));
  const float mean = n > 0 ? sum / static_cast<float>(n) : 0.0f;
  const __m512 scale = _mm512_set1_ps(1.0f / std::sqrt(mean + eps));
  if (weight == nullptr) {
    Map(x, n, y, [&](__m512 v) { return _mm512_mul_ps(v, scale); });
    return;
  }
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m512 v = _mm512_mul_ps(_mm512_loadu_ps(x + i), scale);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(v, _mm512_loadu_ps(weight + i)));
  }
  if (i < n) {
    const __mmask16 mask = TailMask(n - i);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(mask, x + i), scale);
    _mm512_mask_storeu_ps(y + i, mask, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(mask, weight + i)));
  }
}

void Gelu(const float* x, int64_t n, float* y) {
  Map(x, n, y, Gelu16);
}

void GeGlu(const float* gate, const float* up, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    _mm512_storeu_ps(y + i,
                     _mm512_mul_ps(Gelu16(_mm512_loadu_ps(gate + i)), _mm512_loadu_ps(up + i)));
  }
  if (i < n) {
    const __mmask16 mask = TailMask(n - i);
    const __m512 g = Gelu16(_mm512_maskz_loadu_ps(mask, gate + i));
    _mm512_mask_storeu_ps(y + i, mask, _mm512_mul_ps(g, _mm512_maskz_loadu_ps(mask, up + i)));
  }
}

void Softcap(const float* x, float cap, int64_t n, float* y) {
  const __m512 c = _mm512_set1_ps(cap);
  const __m512 inv_c = _mm512_set1_ps(1.0f / cap);
  Map(x, n, y, [&](__m512 v) { return _mm512_mul_ps(c, Tanh16(_mm512_mul_ps(v, inv_c))); });
}

void Softmax(const float* x, int64_t n, float* y) {
  const __m512 neg_inf = _mm512_set1_ps(-INFINITY);
  __m512 vmax = neg_inf;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) vmax = _mm512_max_ps(vmax, _mm512_loadu_ps(x + i));
  if (i < n) vmax = _mm512_max_ps(vmax, _mm512_mask_loadu_ps(neg_inf, TailMask(n - i), x + i));
  const __m512 max = _mm512_set1_ps(HorizontalMax(vmax));
  __m512d acc[2] = {_mm512_setzero_pd(),
                    _mm512_setzero_pd()};  // the sum in double: n may be 262144
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m512 e = Exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), max));
    _mm512_storeu_ps(y + i, e);
    AccumulateDouble(e, acc);
  }
  if (i < n) {
    const __mmask16 mask = TailMask(n - i);
    const __m512 e =
        _mm512_maskz_mov_ps(mask, Exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(mask, x + i), max)));
    _mm512_mask_storeu_ps(y + i, mask, e);
    AccumulateDouble(e, acc);
  }
  const __m512 inv_sum =
      _mm512_set1_ps(static_cast<float>(1.0 / HorizontalSum(_mm512_add_pd(acc[0], acc[1]))));
  Map(y, n, y, [&](__m512 v) { return _mm512_mul_ps(v, inv_sum); });
}

void Exp(const float* x, int64_t n, float* y) {
  Map(x, n, y, Exp16);
}

}  // namespace tandem::kernels::avx512
