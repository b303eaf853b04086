// Scalar matmul tiles for quantized weights, one for every weight type with a codec
// (TANDEM_CODEC_TYPES): each tile entry is its codec's reference dot product
// (tensor/formats/codec.h's ReferenceDot, the per-family formula of dot_ref.h) of one weight
// row with one activation row.
#include <cstdint>

#include "kernels/ref/dot_ref.h"
#include "tensor/blocks.h"
#include "tensor/formats/codec.h"
#include "tensor/formats/float_types.h"
#include "tensor/type_traits.h"

namespace tandem::kernels::ref {
namespace {

template <class F>
void Tile(const WeightTile& tile, const QuantizedActivations& acts, float* y, int64_t ldy) {
  const int64_t nb = acts.cols / F::kValues;
  for (int r = 0; r < tile.n_rows; ++r) {
    const auto* blocks = reinterpret_cast<const typename F::Block*>(tile.rows[r]);
    for (int64_t t = 0; t < acts.n_rows; ++t) {
      const formats::ActivationRow a = {
          .qs = acts.qs + t * acts.qs_stride,
          .d = acts.d + t * acts.d_stride,
          .s = acts.s ? acts.s + t * acts.d_stride : nullptr,
          .sum16 = acts.sum16 ? acts.sum16 + t * acts.sum16_stride : nullptr,
      };
      y[t * ldy + r] = formats::ReferenceDot<F>(blocks, a, nb);
    }
  }
}

}  // namespace

// The vector paths' family lists (matmul_kernel.h) agree with the codecs' activation formats.
#define TANDEM_CHECK_FAMILY(Name, Family) \
  static_assert(formats::Name::kDot == formats::DotFamily::Family, #Name);
#define TANDEM_Q8_0(Name) TANDEM_CHECK_FAMILY(Name, kQ8_0)
#define TANDEM_Q8_1(Name) TANDEM_CHECK_FAMILY(Name, kQ8_1)
#define TANDEM_Q8_K(Name) TANDEM_CHECK_FAMILY(Name, kQ8_K)
TANDEM_MATMUL_Q8_0_TILES(TANDEM_Q8_0)
TANDEM_MATMUL_Q8_1_TILES(TANDEM_Q8_1)
TANDEM_MATMUL_Q8_K_TILES(TANDEM_Q8_K)

namespace {

template <class F>
void Register(MatMulKernelTable& t) {
  if constexpr (F::kDot != formats::DotFamily::kNone) {
    t.quant_tile[static_cast<size_t>(F::kType)] = Tile<F>;
  }
}

}  // namespace

void FillQuantTiles(MatMulKernelTable& t) {
#define TANDEM_REF_TILE(Name, name) Register<formats::Name>(t);
  TANDEM_CODEC_TYPES(TANDEM_REF_TILE)
#undef TANDEM_REF_TILE
}

}  // namespace tandem::kernels::ref
