// The AVX2 + FMA row ops: simd/ops-inl.h over 8-lane vectors.
#include "kernels/avx2/vec_avx2.h"
#include "kernels/ops_isa.h"
#include "kernels/simd/ops-inl.h"

namespace tandem::kernels::avx2 {

TANDEM_SIMD_DEFINE_OPS(F32x8)

}  // namespace tandem::kernels::avx2
