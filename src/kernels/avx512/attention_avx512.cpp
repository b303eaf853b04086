// The AVX-512 attention inner loop: simd/attention-inl.h over 16-lane vectors (a score sums
// 16-value chunks alternately into two accumulators).
#include "kernels/attention_isa.h"
#include "kernels/avx512/vec_avx512.h"
#include "kernels/simd/attention-inl.h"
#include "kernels/simd/dense_attention-inl.h"

namespace tandem::kernels::avx512 {

TANDEM_SIMD_DEFINE_ATTENTION(F32x16)
TANDEM_SIMD_DEFINE_DENSE_ATTENTION(F32x16)

}  // namespace tandem::kernels::avx512
