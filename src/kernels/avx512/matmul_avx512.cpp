// The AVX-512 path's matmul kernel table: the row-major tiles and the packed-layout ones.
#include "kernels/avx512/dot_avx512.h"

namespace tandem::kernels::avx512 {

TANDEM_DEFINE_MATMUL_KERNEL_TABLE_WITH_PACKED

}  // namespace tandem::kernels::avx512
