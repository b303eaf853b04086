// Scalar F32/F16/BF16 matmul tiles: one sequential f32 sum per output element.
#include <cstdint>
#include <cstring>

#include "kernels/ref/dot_ref.h"
#include "tensor/float16.h"

namespace tandem::kernels::ref {
namespace {

inline float LoadWeight(const uint8_t* row, int64_t i, float /*tag*/) {
  float w;
  std::memcpy(&w, row + 4 * i, sizeof w);
  return w;
}

struct F16Tag {};
struct BF16Tag {};

inline float LoadWeight(const uint8_t* row, int64_t i, F16Tag) {
  uint16_t h;
  std::memcpy(&h, row + 2 * i, sizeof h);
  return Fp16ToFp32(h);
}

inline float LoadWeight(const uint8_t* row, int64_t i, BF16Tag) {
  uint16_t h;
  std::memcpy(&h, row + 2 * i, sizeof h);
  return Bf16ToFp32(h);
}

template <class Tag>
void Tile(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x, float* y,
          int64_t ldy) {
  for (int r = 0; r < tile.n_rows; ++r) {
    const uint8_t* row = tile.rows[r];
    for (int64_t t = 0; t < n_x; ++t) {
      const float* xt = x + t * ldx;
      float acc = 0.0f;
      for (int64_t i = 0; i < cols; ++i) acc = acc + LoadWeight(row, i, Tag{}) * xt[i];
      y[t * ldy + r] = acc;
    }
  }
}

}  // namespace

void MatMulTileF32(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                   float* y, int64_t ldy) {
  Tile<float>(tile, cols, x, ldx, n_x, y, ldy);
}

void MatMulTileF16(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                   float* y, int64_t ldy) {
  Tile<F16Tag>(tile, cols, x, ldx, n_x, y, ldy);
}

void MatMulTileBF16(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                    float* y, int64_t ldy) {
  Tile<BF16Tag>(tile, cols, x, ldx, n_x, y, ldy);
}

}  // namespace tandem::kernels::ref
