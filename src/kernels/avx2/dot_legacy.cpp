// AVX2 matmul tiles for the 32-value block types: simd/dot_legacy-inl.h over two groups of 8
// lanes (dot_lanes.h).
#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"
#include "kernels/simd/dot_legacy-inl.h"

namespace tandem::kernels::avx2 {

TANDEM_SIMD_DEFINE_LEGACY_TILES

}  // namespace tandem::kernels::avx2
