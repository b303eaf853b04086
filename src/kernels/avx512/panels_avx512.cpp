// The avx512 path's MatMulPanelRows: simd/panels-inl.h over its vector trait.
#include "kernels/avx512/vec_avx512.h"
#include "kernels/panels_isa.h"
#include "kernels/simd/panels-inl.h"

namespace tandem::kernels::avx512 {

TANDEM_SIMD_DEFINE_PANELS(F32x16)

}  // namespace tandem::kernels::avx512
