// The F32/F16/BF16 matmul tiles (matmul_kernel.h) over a vector trait V (vec_trait.h), for the
// ISA translation units only. Each output element keeps V::kLanes f32 lanes over the columns
// (lane l sums columns i with i % kLanes == l, by FMA in column order; the ragged end is a
// zero-filled partial load), then the trait's fixed horizontal sum; the structure never depends
// on the tile or the batch.
#pragma once

#include <cstdint>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/prefetch-inl.h"
#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::simd {

// Weight row loaders: kLanes values from column i (LoadPartial: n < kLanes of them).
template <VecTrait V>
struct RowF32 {
  static typename V::V Load(const uint8_t* row, int64_t i) {
    return V::Load(reinterpret_cast<const float*>(row) + i);
  }
  static typename V::V LoadPartial(const uint8_t* row, int64_t i, int n) {
    return V::MaskLoad(V::FirstN(n), reinterpret_cast<const float*>(row) + i);
  }
};

template <VecTrait V>
struct RowF16 {
  static typename V::V Load(const uint8_t* row, int64_t i) { return V::LoadF16(row + 2 * i); }
  static typename V::V LoadPartial(const uint8_t* row, int64_t i, int n) {
    return V::LoadPartialF16(row + 2 * i, n);
  }
};

template <VecTrait V>
struct RowBF16 {
  static typename V::V Load(const uint8_t* row, int64_t i) { return V::LoadBF16(row + 2 * i); }
  static typename V::V LoadPartial(const uint8_t* row, int64_t i, int n) {
    return V::LoadPartialBF16(row + 2 * i, n);
  }
};

// NR weight rows x NT activation rows; results for rows >= n_valid are dropped.
// `plan` (when not null) gets one prefetch per column chunk, numbered from `chunk0`.
template <VecTrait V, class W, int NR, int NT>
void FloatBlock(const uint8_t* const* rows, int n_valid, int64_t cols, const float* x, int64_t ldx,
                float* y, int64_t ldy, const PrefetchPlan* plan, int64_t chunk0) {
  constexpr int kL = V::kLanes;
  typename V::V acc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = V::Zero();
  int64_t i = 0;
  for (; i + kL <= cols; i += kL) {
    if (plan != nullptr) PrefetchBlock<V>(*plan, chunk0 + i / kL);
    typename V::V w[NR];
    for (int r = 0; r < NR; ++r) w[r] = W::Load(rows[r], i);
    for (int t = 0; t < NT; ++t) {
      const auto xv = V::Load(x + t * ldx + i);
      for (int r = 0; r < NR; ++r) acc[r][t] = V::MulAdd(w[r], xv, acc[r][t]);
    }
  }
  if (i < cols) {
    const int n = static_cast<int>(cols - i);
    typename V::V w[NR];
    for (int r = 0; r < NR; ++r) w[r] = W::LoadPartial(rows[r], i, n);
    for (int t = 0; t < NT; ++t) {
      const auto xv = V::MaskLoad(V::FirstN(n), x + t * ldx + i);
      for (int r = 0; r < NR; ++r) acc[r][t] = V::MulAdd(w[r], xv, acc[r][t]);
    }
  }
  for (int r = 0; r < NR && r < n_valid; ++r)
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = V::ReduceSum(acc[r][t]);
}

// Register blocks: 4 weight rows x (2 activation rows with 16 registers, 4 with 32).
inline constexpr int kFloatRowsPerBlock = 4;
template <VecTrait V>
inline constexpr int kFloatColsPerBlock = V::kRegisters / 8;

// Runs FloatBlock<V, W, NR, NT> for the NT (1 <= NT < kMax) equal to n, if there is one.
template <VecTrait V, class W, int NT, int kMax>
inline void FloatBlockTail(int64_t n, const uint8_t* const* rows, int n_valid, int64_t cols,
                           const float* x, int64_t ldx, float* y, int64_t ldy,
                           const PrefetchPlan* plan, int64_t chunk0) {
  if constexpr (NT < kMax) {
    if (n == NT) {
      return FloatBlock<V, W, kFloatRowsPerBlock, NT>(rows, n_valid, cols, x, ldx, y, ldy, plan,
                                                      chunk0);
    }
    FloatBlockTail<V, W, NT + 1, kMax>(n, rows, n_valid, cols, x, ldx, y, ldy, plan, chunk0);
  }
}

template <VecTrait V, class W>
void FloatTile(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
               float* y, int64_t ldy) {
  constexpr int kRows = kFloatRowsPerBlock;
  constexpr int kCols = kFloatColsPerBlock<V>;
  const int64_t chunks = (cols + V::kLanes - 1) / V::kLanes;
  const PrefetchPlan plan(tile, chunks * (kTileRows / kRows));
  for (int r0 = 0; r0 < tile.n_rows; r0 += kRows) {
    const uint8_t* const* group = tile.rows + r0;
    const int n_valid = tile.n_rows - r0;
    const int64_t chunk0 = (r0 / kRows) * chunks;
    const PrefetchPlan* pf = &plan;  // prefetch during the first pass over the rows only
    int64_t t = 0;
    for (; t + kCols <= n_x; t += kCols, pf = nullptr) {
      FloatBlock<V, W, kRows, kCols>(group, n_valid, cols, x + t * ldx, ldx, y + t * ldy + r0, ldy,
                                     pf, chunk0);
    }
    FloatBlockTail<V, W, 1, kCols>(n_x - t, group, n_valid, cols, x + t * ldx, ldx,
                                   y + t * ldy + r0, ldy, pf, chunk0);
  }
}

}  // namespace tandem::kernels::simd

// Inside an ISA namespace: defines that ISA's float tiles (matmul_kernel.h).
#define TANDEM_SIMD_DEFINE_FLOAT_TILE(V, Name)                                             \
  void MatMulTile##Name(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, \
                        int64_t n_x, float* y, int64_t ldy) {                              \
    simd::FloatTile<V, simd::Row##Name<V>>(tile, cols, x, ldx, n_x, y, ldy);               \
  }
#define TANDEM_SIMD_DEFINE_FLOAT_TILES(V) \
  TANDEM_SIMD_DEFINE_FLOAT_TILE(V, F32)   \
  TANDEM_SIMD_DEFINE_FLOAT_TILE(V, F16)   \
  TANDEM_SIMD_DEFINE_FLOAT_TILE(V, BF16)
