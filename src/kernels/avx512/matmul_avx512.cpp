// The AVX-512 path's matmul kernel table.
#include "kernels/avx512/dot_avx512.h"

namespace tandem::kernels::avx512 {

TANDEM_DEFINE_MATMUL_KERNEL_TABLE

}  // namespace tandem::kernels::avx512
