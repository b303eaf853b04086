// AVX-512 micro-kernels for MatMul (built with AVX-512 F/BW/VL/DQ/VNNI flags; reached only
// through the kernel table when the host supports them). Contracts as in matmul_kernel.h.
#pragma once

#include <cstdint>

#include "kernels/matmul_kernel.h"

namespace tandem::kernels::avx512 {

void MatMulTileF32(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                   float* y, int64_t ldy);
void MatMulTileF16(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                   float* y, int64_t ldy);
void MatMulTileBF16(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, int64_t n_x,
                    float* y, int64_t ldy);

// Quantized tiles (need AVX-512 VNNI); bitwise equal to the ref:: versions.
void MatMulTileQ4_0(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileQ5_0(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileQ8_0(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileIQ4_NL(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                      int64_t ldy);
void MatMulTileMXFP4(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                     int64_t ldy);
void MatMulTileQ4_1(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileQ5_1(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileQ2_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileQ3_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileIQ4_XS(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                      int64_t ldy);
void MatMulTileQ4_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileQ5_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);
void MatMulTileQ6_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy);

// Activation quantizers (QuantizeRowFn), bit-exact with the ref:: ones.
void QuantizeActivationsQ8_0(const float* x, int64_t cols, const QuantizedRow& out);
void QuantizeActivationsQ8_1(const float* x, int64_t cols, const QuantizedRow& out);
void QuantizeActivationsQ8_K(const float* x, int64_t cols, const QuantizedRow& out);

}  // namespace tandem::kernels::avx512
