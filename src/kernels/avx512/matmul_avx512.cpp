// The AVX-512 path's matmul kernel table: the row-major tiles and the packed-layout ones.
#include "kernels/avx512/dot_avx512.h"

namespace tandem::kernels::avx512 {

const MatMulKernelTable& MatMulKernels() {
  static const MatMulKernelTable table = [] {
    MatMulKernelTable t;
    TANDEM_FILL_MATMUL_KERNEL_TABLE
    TANDEM_MATMUL_PACKED_TILES(TANDEM_REGISTER_PACKED_TILE)
    return t;
  }();
  return table;
}

}  // namespace tandem::kernels::avx512
