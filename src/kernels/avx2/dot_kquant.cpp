// AVX2 matmul tiles for the Q8_K-activation types: simd/dot_kquant-inl.h over two groups of 8
// lanes (dot_lanes.h).
#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"
#include "kernels/simd/dot_kquant-inl.h"

namespace tandem::kernels::avx2 {

TANDEM_SIMD_DEFINE_KQUANT_TILES

}  // namespace tandem::kernels::avx2
