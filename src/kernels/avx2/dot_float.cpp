// AVX2 F32/F16/BF16 matmul tiles: simd/dot_float-inl.h over 8-lane vectors (each output element
// keeps 8 f32 lanes over the columns).
#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/vec_avx2.h"
#include "kernels/simd/dot_float-inl.h"

namespace tandem::kernels::avx2 {

TANDEM_SIMD_DEFINE_FLOAT_TILES(F32x8)

}  // namespace tandem::kernels::avx2
