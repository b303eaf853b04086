// The AVX2 path's matmul kernel table.
#include "kernels/avx2/dot_avx2.h"

namespace tandem::kernels::avx2 {

TANDEM_DEFINE_MATMUL_KERNEL_TABLE

}  // namespace tandem::kernels::avx2
