// The AVX2 + FMA + F16C attention inner loop: simd/attention-inl.h over 8-lane vectors (a score
// sums 8-value chunks alternately into two accumulators).
#include "kernels/attention_isa.h"
#include "kernels/avx2/vec_avx2.h"
#include "kernels/simd/attention-inl.h"
#include "kernels/simd/dense_attention-inl.h"

namespace tandem::kernels::avx2 {

TANDEM_SIMD_DEFINE_ATTENTION(F32x8)
TANDEM_SIMD_DEFINE_DENSE_ATTENTION(F32x8)

}  // namespace tandem::kernels::avx2
