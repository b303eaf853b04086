// AVX-512 micro-kernels for MatMul (built with AVX-512 F/BW/VL/DQ/VNNI flags; reached only
// through the kernel table when the host supports them). Contracts as in matmul_kernel.h; the
// quantized tiles (which need VNNI), the packed-layout tiles and the activation quantizers are
// bitwise equal to the ref:: versions.
#pragma once

#include <cstdint>

#include "kernels/matmul_kernel.h"

namespace tandem::kernels::avx512 {

TANDEM_DECLARE_MATMUL_KERNELS
// One zmm lane per row: a 64-byte load gives the 16 rows' next 4 bytes.
inline constexpr int kPackedGroupRows = 16;
TANDEM_MATMUL_PACKED_TILES(TANDEM_DECLARE_PACKED_TILE)

}  // namespace tandem::kernels::avx512
