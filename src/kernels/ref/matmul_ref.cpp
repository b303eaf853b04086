// The scalar path's matmul kernel table.
#include "kernels/ref/dot_ref.h"

namespace tandem::kernels::ref {

TANDEM_DEFINE_MATMUL_KERNEL_TABLE

}  // namespace tandem::kernels::ref
