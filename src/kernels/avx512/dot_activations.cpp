// AVX-512 activation quantizers for MatMul: simd/dot_activations-inl.h over 16-lane vectors.
#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/vec_avx512.h"
#include "kernels/simd/dot_activations-inl.h"

namespace tandem::kernels::avx512 {

TANDEM_SIMD_DEFINE_ACTIVATION_QUANTIZERS(F32x16)

}  // namespace tandem::kernels::avx512
