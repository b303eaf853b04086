// The AVX-512 row ops: simd/ops-inl.h over 16-lane vectors.
#include "kernels/avx512/vec_avx512.h"
#include "kernels/ops_isa.h"
#include "kernels/simd/ops-inl.h"

namespace tandem::kernels::avx512 {

TANDEM_SIMD_DEFINE_OPS(F32x16)

}  // namespace tandem::kernels::avx512
