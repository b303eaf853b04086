// The avx2 path's MatMulPanelRows: simd/panels-inl.h over its vector trait.
#include "kernels/avx2/vec_avx2.h"
#include "kernels/panels_isa.h"
#include "kernels/simd/panels-inl.h"

namespace tandem::kernels::avx2 {

TANDEM_SIMD_DEFINE_PANELS(F32x8)

}  // namespace tandem::kernels::avx2
