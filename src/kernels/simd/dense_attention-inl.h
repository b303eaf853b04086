// The dense attention rows (attention_isa.h AttendDenseRows) over a vector trait V
// (vec_trait.h), for the ISA translation units only: a block of query rows of one head against
// every key, K given transposed, as two register-tiled products with the whole score row kept.
//
// Fixed orders, the same whatever rows share a block: score (r, j) starts at zero and adds
// q[r][d]·Kᵀ[d][j] for d ascending (one accumulator per key lane, no horizontal sum); the row's
// maximum is exact; its sum of e^(s - max) adds each lane's keys in ascending order, then the
// trait's fixed horizontal sum; output value (r, i) adds p[r][j]·V[j][i] for j ascending, then
// is multiplied by 1 / sum.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/attention_isa.h"
#include "kernels/simd/ops-inl.h"
#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::simd {

// Register tiles: R query rows x NJ vectors of keys for the scores, R rows x up to NV vectors
// of values for the output (R·NJ and R·NV accumulators, plus the loaded vectors).
template <VecTrait V>
inline constexpr int kDenseRows = V::kRegisters >= 32 ? 6 : 3;
template <VecTrait V>
inline constexpr int kDenseKeyVectors = V::kRegisters >= 32 ? 4 : 3;
template <VecTrait V>
inline constexpr int kDenseValueVectors = V::kRegisters >= 32 ? 4 : 3;

// s[r][j0 + ·] for NJ vectors of keys (m <= NJ·kLanes valid), rows q[r] (head_dim values).
template <VecTrait V, int R, int NJ>
inline void DenseScores(const float* const* q, const float* kt, size_t kt_stride, int head_dim,
                        int j0, int m, float* const* s) {
  constexpr int kL = V::kLanes;
  typename V::V acc[R][NJ];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NJ; ++u) acc[r][u] = V::Zero();
  if (m == NJ * kL) {
    for (int d = 0; d < head_dim; ++d) {
      const float* row = kt + static_cast<size_t>(d) * kt_stride + j0;
      typename V::V k[NJ];
      for (int u = 0; u < NJ; ++u) k[u] = V::Load(row + u * kL);
      for (int r = 0; r < R; ++r) {
        const auto qv = V::Set1(q[r][d]);
        for (int u = 0; u < NJ; ++u) acc[r][u] = V::MulAdd(qv, k[u], acc[r][u]);
      }
    }
  } else {
    for (int d = 0; d < head_dim; ++d) {
      const float* row = kt + static_cast<size_t>(d) * kt_stride + j0;
      typename V::V k[NJ];
      for (int u = 0; u < NJ; ++u) {
        k[u] = V::MaskLoad(V::FirstN(std::clamp(m - u * kL, 0, kL)), row + u * kL);
      }
      for (int r = 0; r < R; ++r) {
        const auto qv = V::Set1(q[r][d]);
        for (int u = 0; u < NJ; ++u) acc[r][u] = V::MulAdd(qv, k[u], acc[r][u]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NJ; ++u) V::Store(s[r] + j0 + u * kL, acc[r][u]);
}

// out[r][i0, i0 + NV·kLanes) = Σ_j p[r][j]·v[j][i0 + ·] · inv_sum[r].
template <VecTrait V, int R, int NV>
inline void DenseValues(const float* const* p, int n_keys, const float* v, size_t v_stride, int i0,
                        const float* inv_sum, float* const* out) {
  constexpr int kL = V::kLanes;
  typename V::V acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int u = 0; u < NV; ++u) acc[r][u] = V::Zero();
  for (int j = 0; j < n_keys; ++j) {
    const float* row = v + static_cast<size_t>(j) * v_stride + i0;
    typename V::V x[NV];
    for (int u = 0; u < NV; ++u) x[u] = V::Load(row + u * kL);
    for (int r = 0; r < R; ++r) {
      const auto pv = V::Set1(p[r][j]);
      for (int u = 0; u < NV; ++u) acc[r][u] = V::MulAdd(pv, x[u], acc[r][u]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const auto scale = V::Set1(inv_sum[r]);
    for (int u = 0; u < NV; ++u) V::Store(out[r] + i0 + u * kL, V::Mul(acc[r][u], scale));
  }
}

// The value columns in runs of kDenseValueVectors vectors, then the rest.
template <VecTrait V, int R, int NV>
inline void DenseValueRuns(const float* const* p, int n_keys, const float* v, size_t v_stride,
                           int v_dim, int i0, const float* inv_sum, float* const* out) {
  constexpr int kL = V::kLanes;
  for (; i0 + NV * kL <= v_dim; i0 += NV * kL) {
    DenseValues<V, R, NV>(p, n_keys, v, v_stride, i0, inv_sum, out);
  }
  if constexpr (NV > 1)
    DenseValueRuns<V, R, NV - 1>(p, n_keys, v, v_stride, v_dim, i0, inv_sum, out);
}

// Score values a block of R rows needs: each row's keys rounded up to whole steps of NJ vectors.
template <VecTrait V>
inline int PaddedKeys(int n_keys) {
  constexpr int kStep = kDenseKeyVectors<V> * V::kLanes;
  return (n_keys + kStep - 1) / kStep * kStep;
}

// R rows (pointers may repeat: the caller drops the extra rows' outputs); `scores` holds
// R·PaddedKeys<V>(n_keys) floats.
template <VecTrait V, int R>
void DenseRowBlock(const float* const* q, const float* kt, size_t kt_stride, int n_keys,
                   int head_dim, const float* v, size_t v_stride, int v_dim, float scale,
                   float* const* out, float* scores) {
  constexpr int kL = V::kLanes;
  constexpr int NJ = kDenseKeyVectors<V>;
  const int padded = PaddedKeys<V>(n_keys);
  float* s[R];
  for (int r = 0; r < R; ++r) s[r] = scores + static_cast<size_t>(r) * padded;
  for (int j0 = 0; j0 < n_keys; j0 += NJ * kL) {
    DenseScores<V, R, NJ>(q, kt, kt_stride, head_dim, j0, std::min(NJ * kL, n_keys - j0), s);
  }
  float inv_sum[R];
  const auto vscale = V::Set1(scale);
  const auto neg_inf = V::Set1(-INFINITY);
  for (int r = 0; r < R; ++r) {
    // Scaled scores, their maximum (exact in any order; lanes past n_keys count as -inf), then
    // e^(s - max) in place and its sum.
    auto vmax = neg_inf;
    for (int j = 0; j < n_keys; j += kL) {
      const auto m = V::FirstN(std::min(kL, n_keys - j));
      const auto x = V::Mul(V::MaskLoadOr(neg_inf, m, s[r] + j), vscale);
      V::Store(s[r] + j, x);
      vmax = V::Max(x, vmax);
    }
    const auto max = V::Set1(V::ReduceMax(vmax));
    auto vsum = V::Zero();
    for (int j = 0; j < n_keys; j += kL) {
      const auto m = V::FirstN(std::min(kL, n_keys - j));
      const auto e = V::IfThenElseZero(m, Exp<V>(V::Sub(V::Load(s[r] + j), max)));
      V::Store(s[r] + j, e);
      vsum = V::Add(vsum, e);
    }
    inv_sum[r] = 1.0f / V::ReduceSum(vsum);
  }
  DenseValueRuns<V, R, kDenseValueVectors<V>>(s, n_keys, v, v_stride, v_dim, 0, inv_sum, out);
}

template <VecTrait V>
void AttendDenseRows(const DenseRows& a) {
  constexpr int R = kDenseRows<V>;
  static_assert(R <= kDenseMaxRows && kDenseKeyVectors<V> * V::kLanes <= kDenseMaxKeyStep);
  float* scores = a.scratch;
  float* spare = a.scratch + static_cast<size_t>(R) * PaddedKeys<V>(a.n_keys);
  for (int r0 = 0; r0 < a.n_rows; r0 += R) {
    const float* q[R];
    float* out[R];
    const int n = std::min(R, a.n_rows - r0);
    for (int r = 0; r < R; ++r) {
      q[r] = a.q + static_cast<size_t>(r0 + std::min(r, n - 1)) * a.q_stride;
      out[r] = r < n ? a.out + static_cast<size_t>(r0 + r) * a.out_stride
                     : spare + static_cast<size_t>(r) * a.v_dim;
    }
    DenseRowBlock<V, R>(q, a.kt, a.kt_stride, a.n_keys, a.head_dim, a.v, a.v_stride, a.v_dim,
                        a.scale, out, scores);
  }
}

}  // namespace tandem::kernels::simd

// Inside an ISA namespace: defines that ISA's AttendDenseRows (attention_isa.h).
#define TANDEM_SIMD_DEFINE_DENSE_ATTENTION(V)   \
  void AttendDenseRows(const DenseRows& rows) { \
    simd::AttendDenseRows<V>(rows);             \
  }
