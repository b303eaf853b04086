// The scalar path's matmul kernel table.
#include "kernels/ref/dot_ref.h"

namespace tandem::kernels::ref {

// Every type with a codec has a scalar tile here (FillQuantTiles), the vector paths only those
// they list: MatMul falls back to these for the rest.
const MatMulKernelTable& MatMulKernels() {
  static const MatMulKernelTable table = [] {
    MatMulKernelTable t;
    TANDEM_MATMUL_FLOAT_TILES(TANDEM_REGISTER_FLOAT_TILE)
    FillQuantTiles(t);
    t.quantize_q8_0 = QuantizeActivationsQ8_0;
    t.quantize_q8_1 = QuantizeActivationsQ8_1;
    t.quantize_q8_k = QuantizeActivationsQ8_K;
    return t;
  }();
  return table;
}

}  // namespace tandem::kernels::ref
