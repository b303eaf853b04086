// AVX-512 F32/F16/BF16 matmul tiles: simd/dot_float-inl.h over 16-lane vectors (each output
// element keeps 16 f32 lanes over the columns).
#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/vec_avx512.h"
#include "kernels/simd/dot_float-inl.h"

namespace tandem::kernels::avx512 {

TANDEM_SIMD_DEFINE_FLOAT_TILES(F32x16)

}  // namespace tandem::kernels::avx512
