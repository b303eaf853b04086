// The AVX2 path's matmul kernel table: the row-major tiles and the packed-layout ones.
#include "kernels/avx2/dot_avx2.h"

namespace tandem::kernels::avx2 {

TANDEM_DEFINE_MATMUL_KERNEL_TABLE_WITH_PACKED

}  // namespace tandem::kernels::avx2
