// AVX-512 VNNI matmul tiles for the 32-value block types: simd/dot_legacy-inl.h over one group
// of 16 lanes (dot_lanes.h).

// GCC 12 reports its own _mm512_undefined_*() placeholders inside intrinsics as uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/dot_lanes.h"
#include "kernels/simd/dot_legacy-inl.h"

namespace tandem::kernels::avx512 {

TANDEM_SIMD_DEFINE_LEGACY_TILES

}  // namespace tandem::kernels::avx512
