#include "kernels/avx512/vec_avx512.h"

#include "kernels/simd/vec_trait_test-inl.h"

namespace tandem::kernels::avx512 {
namespace {

TEST(VecAvx512, SumEachHasTheBitsOfReduceSum) {
  simd::ExpectSumEachMatchesReduceSum<F32x16>(Isa::kAvx512);
}

}  // namespace
}  // namespace tandem::kernels::avx512
