// AVX-512 micro-kernels for MatMul (built with AVX-512 F/BW/VL/DQ/VNNI flags; reached only
// through the kernel table when the host supports them). Contracts as in matmul_kernel.h; the
// quantized tiles (which need VNNI), the packed-layout tiles and the activation quantizers are
// bitwise equal to the ref:: versions.
#pragma once

#include <cstdint>

#include "kernels/matmul_kernel.h"

namespace tandem::kernels::avx512 {

TANDEM_DECLARE_MATMUL_KERNELS
TANDEM_MATMUL_PACKED_TILES(TANDEM_DECLARE_PACKED_TILE)

}  // namespace tandem::kernels::avx512
