// AVX2 micro-kernels for MatMul (built with AVX2, FMA and F16C flags; reached only through the
// kernel table when the host supports them). Contracts as in matmul_kernel.h; the quantized
// tiles and activation quantizers are bitwise equal to the ref:: versions.
#pragma once

#include <cstdint>

#include "kernels/matmul_kernel.h"

namespace tandem::kernels::avx2 {

TANDEM_DECLARE_MATMUL_KERNELS
// One ymm lane per row: a 32-byte load gives the 8 rows' next 4 bytes.
inline constexpr int kPackedGroupRows = 8;
TANDEM_MATMUL_PACKED_TILES(TANDEM_DECLARE_PACKED_TILE)

}  // namespace tandem::kernels::avx2
