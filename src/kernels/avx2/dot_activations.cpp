// AVX2 activation quantizers for MatMul: simd/dot_activations-inl.h over 8-lane vectors.
#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/vec_avx2.h"
#include "kernels/simd/dot_activations-inl.h"

namespace tandem::kernels::avx2 {

TANDEM_SIMD_DEFINE_ACTIVATION_QUANTIZERS(F32x8)

}  // namespace tandem::kernels::avx2
