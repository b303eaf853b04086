// AVX2 + FMA row ops. Vectors of 8 lanes; the last partial vector of a row goes through the same
// vector code with masked loads/stores, so an element's result never depends on its index.
// Reductions: fixed lane accumulators, combined in a fixed order at the end of the row.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/ops_isa.h"

namespace tandem::kernels::avx2 {
namespace {

constexpr int kLanes = 8;

// Lanes [0, k) set, for a partial vector of k < 8 elements.
inline __m256i TailMask(int64_t k) {
  const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(k)), index);
}

// Sum of the 8 lanes, in a fixed order.
inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline double HorizontalSum(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
  return _mm_cvtsd_f64(s);
}

// acc += the 8 lanes of v widened to double (lanes 0-3 to acc[0], 4-7 to acc[1]).
inline void AccumulateDouble(__m256 v, __m256d acc[2]) {
  acc[0] = _mm256_add_pd(acc[0], _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  acc[1] = _mm256_add_pd(acc[1], _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

inline float HorizontalMax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// e^x, relative error a few ulp. x < -87 gives 0, x > 88.72 gives +inf; NaN stays NaN.
// x = n·ln2 + r with |r| <= ln2/2; e^r by its Taylor series to degree 7 (truncation < 1e-8).
inline __m256 Exp8(__m256 x) {
  const __m256 too_small = _mm256_cmp_ps(x, _mm256_set1_ps(-87.0f), _CMP_LT_OQ);
  const __m256 too_large = _mm256_cmp_ps(x, _mm256_set1_ps(88.72f), _CMP_GT_OQ);
  x = _mm256_min_ps(_mm256_set1_ps(88.0f), _mm256_max_ps(_mm256_set1_ps(-87.0f), x));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);  // ln2, high bits
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.428606820309417e-6f), r);      // ln2, low bits
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  const __m256i bits =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_andnot_ps(too_small, _mm256_mul_ps(p, _mm256_castsi256_ps(bits)));
  return _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), too_large);
}

// tanh(u), error a few ulp: odd Taylor polynomial (to u¹¹) for |u| < 0.25, else
// (e - 1)/(e + 1) with e = exp(2|u|); |u| is clamped to 9, where tanh is 1 in f32.
inline __m256 Tanh8(__m256 u) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 sign = _mm256_and_ps(u, sign_bit);
  const __m256 a = _mm256_min_ps(_mm256_set1_ps(9.0f), _mm256_andnot_ps(sign_bit, u));
  const __m256 e = Exp8(_mm256_add_ps(a, a));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 big = _mm256_div_ps(_mm256_sub_ps(e, one), _mm256_add_ps(e, one));
  const __m256 a2 = _mm256_mul_ps(a, a);
  __m256 p = _mm256_set1_ps(-1382.0f / 155925.0f);
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(62.0f / 2835.0f));
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(-17.0f / 315.0f));
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(2.0f / 15.0f));
  p = _mm256_fmadd_ps(p, a2, _mm256_set1_ps(-1.0f / 3.0f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, a2), a, a);
  const __m256 is_small = _mm256_cmp_ps(a, _mm256_set1_ps(0.25f), _CMP_LT_OQ);
  return _mm256_or_ps(_mm256_blendv_ps(big, small, is_small), sign);
}

// 0.5·x·(1 + tanh u), u = sqrt(2/π)·(x + 0.044715·x³), as x / (1 + e^(-2u)) (no cancellation).
inline __m256 Gelu8(__m256 x) {
  const __m256 x3 = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.044715f), x), x), x);
  const __m256 u = _mm256_mul_ps(_mm256_set1_ps(0.7978845608028654f), _mm256_add_ps(x, x3));
  const __m256 e = Exp8(_mm256_mul_ps(_mm256_set1_ps(-2.0f), u));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

// Applies f (one __m256 -> __m256) to x[0..n) -> y, the tail through masked loads/stores.
template <typename F>
inline void Map(const float* x, int64_t n, float* y, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    _mm256_maskstore_ps(y + i, mask, f(_mm256_maskload_ps(x + i, mask)));
  }
}

}  // namespace

void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  __m256 acc2 = _mm256_setzero_ps(), acc3 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
    const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
    acc0 = _mm256_fmadd_ps(v0, v0, acc0);
    acc1 = _mm256_fmadd_ps(v1, v1, acc1);
    acc2 = _mm256_fmadd_ps(v2, v2, acc2);
    acc3 = _mm256_fmadd_ps(v3, v3, acc3);
  }
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 v = _mm256_loadu_ps(x + i);
    acc0 = _mm256_fmadd_ps(v, v, acc0);
  }
  if (i < n) {
    const __m256 v = _mm256_maskload_ps(x + i, TailMask(n - i));
    acc0 = _mm256_fmadd_ps(v, v, acc0);
  }
  const float sum =
      HorizontalSum(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)));
  const float mean = n > 0 ? sum / static_cast<float>(n) : 0.0f;
  const __m256 scale = _mm256_set1_ps(1.0f / std::sqrt(mean + eps));
  if (weight == nullptr) {
    Map(x, n, y, [&](__m256 v) { return _mm256_mul_ps(v, scale); });
    return;
  }
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), scale);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(v, _mm256_loadu_ps(weight + i)));
  }
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 v = _mm256_mul_ps(_mm256_maskload_ps(x + i, mask), scale);
    _mm256_maskstore_ps(y + i, mask, _mm256_mul_ps(v, _mm256_maskload_ps(weight + i, mask)));
  }
}

void Gelu(const float* x, int64_t n, float* y) {
  Map(x, n, y, Gelu8);
}

void GeGlu(const float* gate, const float* up, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    _mm256_storeu_ps(y + i,
                     _mm256_mul_ps(Gelu8(_mm256_loadu_ps(gate + i)), _mm256_loadu_ps(up + i)));
  }
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 g = Gelu8(_mm256_maskload_ps(gate + i, mask));
    _mm256_maskstore_ps(y + i, mask, _mm256_mul_ps(g, _mm256_maskload_ps(up + i, mask)));
  }
}

void Softcap(const float* x, float cap, int64_t n, float* y) {
  const __m256 c = _mm256_set1_ps(cap);
  const __m256 inv_c = _mm256_set1_ps(1.0f / cap);
  Map(x, n, y, [&](__m256 v) { return _mm256_mul_ps(c, Tanh8(_mm256_mul_ps(v, inv_c))); });
}

void Softmax(const float* x, int64_t n, float* y) {
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  __m256 vmax = neg_inf;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(x + i));
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 v =
        _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(x + i, mask), _mm256_castsi256_ps(mask));
    vmax = _mm256_max_ps(vmax, v);
  }
  const __m256 max = _mm256_set1_ps(HorizontalMax(vmax));
  __m256d acc[2] = {_mm256_setzero_pd(),
                    _mm256_setzero_pd()};  // the sum in double: n may be 262144
  i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), max));
    _mm256_storeu_ps(y + i, e);
    AccumulateDouble(e, acc);
  }
  if (i < n) {
    const __m256i mask = TailMask(n - i);
    const __m256 e = _mm256_and_ps(Exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), max)),
                                   _mm256_castsi256_ps(mask));
    _mm256_maskstore_ps(y + i, mask, e);
    AccumulateDouble(e, acc);
  }
  const __m256 inv_sum =
      _mm256_set1_ps(static_cast<float>(1.0 / HorizontalSum(_mm256_add_pd(acc[0], acc[1]))));
  Map(y, n, y, [&](__m256 v) { return _mm256_mul_ps(v, inv_sum); });
}

void Exp(const float* x, int64_t n, float* y) {
  Map(x, n, y, Exp8);
}

}  // namespace tandem::kernels::avx2
