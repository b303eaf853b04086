// AVX2 F32/F16/BF16 matmul tiles. Each output element keeps 8 f32 lanes over the columns (lane l
// sums columns i with i % 8 == l, by FMA in column order; the ragged end is zero-padded), then
// one fixed horizontal sum; the structure never depends on the tile or the batch.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"

namespace tandem::kernels::avx2 {
namespace {

// Lanes [0, n) of a vector of 8 floats, zeros elsewhere.
__m256 LoadPartialF32(const float* p, int n) {
  alignas(32) float buf[8] = {};
  std::memcpy(buf, p, n * sizeof(float));
  return _mm256_load_ps(buf);
}

__m128i LoadPartial16(const uint8_t* p, int n) {
  alignas(16) uint16_t buf[8] = {};
  std::memcpy(buf, p, n * sizeof(uint16_t));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(buf));
}

struct F32 {
  static __m256 Load(const uint8_t* row, int64_t i) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
  static __m256 LoadTail(const uint8_t* row, int64_t i, int n) {
    return LoadPartialF32(reinterpret_cast<const float*>(row) + i, n);
  }
};

struct F16 {
  static __m256 Load(const uint8_t* row, int64_t i) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  }
  static __m256 LoadTail(const uint8_t* row, int64_t i, int n) {
    return _mm256_cvtph_ps(LoadPartial16(row + 2 * i, n));
  }
};

struct BF16 {
  static __m256 Widen(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static __m256 Load(const uint8_t* row, int64_t i) {
    return Widen(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * i)));
  }
  static __m256 LoadTail(const uint8_t* row, int64_t i, int n) {
    return Widen(LoadPartial16(row + 2 * i, n));
  }
};

float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// NR weight rows x NT activation rows; results for rows >= n_valid are dropped.
// `plan` (when not null) gets one Prefetch call per column chunk, numbered from `chunk0`.
template <class W, int NR, int NT>
void Block(const uint8_t* const* rows, int n_valid, int64_t cols, const float* x, int64_t ldx,
           float* y, int64_t ldy, const PrefetchPlan* plan, int64_t chunk0) {
  __m256 acc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= cols; i += 8) {
    if (plan != nullptr) Prefetch(*plan, chunk0 + i / 8);
    __m256 w[NR];
    for (int r = 0; r < NR; ++r) w[r] = W::Load(rows[r], i);
    for (int t = 0; t < NT; ++t) {
      const __m256 xv = _mm256_loadu_ps(x + t * ldx + i);
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm256_fmadd_ps(w[r], xv, acc[r][t]);
    }
  }
  if (i < cols) {
    const int n = static_cast<int>(cols - i);
    __m256 w[NR];
    for (int r = 0; r < NR; ++r) w[r] = W::LoadTail(rows[r], i, n);
    for (int t = 0; t < NT; ++t) {
      const __m256 xv = LoadPartialF32(x + t * ldx + i, n);
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm256_fmadd_ps(w[r], xv, acc[r][t]);
    }
  }
  for (int r = 0; r < NR && r < n_valid; ++r)
    for (int t = 0; t < NT; ++t) y[t * ldy + r] = HorizontalSum(acc[r][t]);
}

constexpr int kRowsPerBlock = 4;
constexpr int kColsPerBlock = 2;  // activation rows per register block

template <class W>
void Tile(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x, float* y,
          int64_t ldy) {
  const int64_t chunks = (cols + 7) / 8;
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

}  // namespace tandem::kernels::avx2
