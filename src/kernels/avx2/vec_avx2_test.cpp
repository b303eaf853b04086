#include "kernels/avx2/vec_avx2.h"

#include "kernels/simd/vec_trait_test-inl.h"

namespace tandem::kernels::avx2 {
namespace {

TEST(VecAvx2, SumEachHasTheBitsOfReduceSum) {
  simd::ExpectSumEachMatchesReduceSum<F32x8>(Isa::kAvx2);
}

}  // namespace
}  // namespace tandem::kernels::avx2
