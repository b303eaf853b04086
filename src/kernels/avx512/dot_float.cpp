// AVX-512 F32/F16/BF16 matmul tiles. Each output element keeps 16 f32 lanes over the columns
// (lane l sums columns i with i % 16 == l, by FMA in column order; the ragged end is a masked
// load), then one fixed horizontal sum; the structure never depends on the tile or the batch.

// GCC 12 reports its own _mm512_undefined_*() placeholders inside intrinsics as uninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/dot_lanes.h"

namespace tandem::kernels::avx512 {
namespace {

struct F32 {
  static __m512 Load(const uint8_t* row, int64_t i) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
  static __m512 LoadTail(const uint8_t* row, int64_t i, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + i);
  }
};

struct F16 {
  static __m512 Load(const uint8_t* row, int64_t i) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  }
  static __m512 LoadTail(const uint8_t* row, int64_t i, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * i));
  }
};

struct BF16 {
  static __m512 Widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 Load(const uint8_t* row, int64_t i) {
    return Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  }
  static __m512 LoadTail(const uint8_t* row, int64_t i, __mmask16 m) {
    return Widen(_mm256_maskz_loadu_epi16(m, row + 2 * i));
  }
};

// NR weight rows x NT activation rows; results for rows >= n_valid are dropped.
// `plan` (when not null) gets one Prefetch call per column chunk, numbered from `chunk0`.
template <class W, int NR, int NT>
void Block(const uint8_t* const* rows, int n_valid, int64_t cols, const float* x, int64_t ldx,
           float* y, int64_t ldy, const PrefetchPlan* plan, int64_t chunk0) {
  __m512 acc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= cols; i += 16) {
    if (plan != nullptr) Prefetch(*plan, chunk0 + i / 16);
    __m512 w[NR];
    for (int r = 0; r < NR; ++r) w[r] = W::Load(rows[r], i);
    for (int t = 0; t < NT; ++t) {
      const __m512 xv = _mm512_loadu_ps(x + t * ldx + i);
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_fmadd_ps(w[r], xv, acc[r][t]);
    }
  }
  if (i < cols) {
    const __mmask16 m = static_cast<__mmask16>((1u << (cols - i)) - 1);
    __m512 w[NR];
    for (int r = 0; r < NR; ++r) w[r] = W::LoadTail(rows[r], i, m);
    for (int t = 0; t < NT; ++t) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + t * ldx + i);
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm512_fmadd_ps(w[r], xv, acc[r][t]);
    }
  }
  for (int r = 0; r < NR && r < n_valid; ++r)
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(acc[r][t]);
}

constexpr int kRowsPerBlock = 4;
constexpr int kColsPerBlock = 4;  // activation rows per register block

template <class W>
void Tile(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x, float* y,
          int64_t ldy) {
  const int64_t chunks = (cols + 15) / 16;
  const PrefetchPlan plan(tile, chunks * (kTileRows / kRowsPerBlock));
  for (int r0 = 0; r0 < tile.n_rows; r0 += kRowsPerBlock) {
    const uint8_t* const* group = tile.rows + r0;
    const int n_valid = tile.n_rows - r0;
    const int64_t chunk0 = (r0 / kRowsPerBlock) * chunks;
    const PrefetchPlan* pf = &plan;  // prefetch during the first pass over the rows only
    int64_t t = 0;
    for (; t + kColsPerBlock <= n_x; t += kColsPerBlock, pf = nullptr) {
      Block<W, kRowsPerBlock, kColsPerBlock>(group, n_valid, cols, x + t * ldx, ldx,
                                             y + t * ldy + r0, ldy, pf, chunk0);
    }
    if (t < n_x) {
      const float* xt = x + t * ldx;
      float* yt = y + t * ldy + r0;
      switch (n_x - t) {
        case 1:
          Block<W, kRowsPerBlock, 1>(group, n_valid, cols, xt, ldx, yt, ldy, pf, chunk0);
          break;
        case 2:
          Block<W, kRowsPerBlock, 2>(group, n_valid, cols, xt, ldx, yt, ldy, pf, chunk0);
          break;
        case 3:
          Block<W, kRowsPerBlock, 3>(group, n_valid, cols, xt, ldx, yt, ldy, pf, chunk0);
          break;
        default:
          break;
      }
    }
  }
}

}  // namespace

void MatMulTileF32(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                   float* y, int64_t ldy) {
  Tile<F32>(tile, cols, x, ldx, n_x, y, ldy);
}

void MatMulTileF16(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                   float* y, int64_t ldy) {
  Tile<F16>(tile, cols, x, ldx, n_x, y, ldy);
}

void MatMulTileBF16(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                    float* y, int64_t ldy) {
  Tile<BF16>(tile, cols, x, ldx, n_x, y, ldy);
}

}  // namespace tandem::kernels::avx512
