// Scalar reference micro-kernels for MatMul: the fallback path and the oracle the SIMD paths are
// tested against. Each computes one tile as matmul_kernel.h specifies:
//   F32/F16/BF16 weights: plain sequential f32 sums, acc = acc + w[i] * x[i] for i = 0..cols-1.
//   Quantized weights against quantized activations, the codecs' ReferenceDot
//   (tensor/formats/codec.h). Per block b, with exact integer sums and
//   fused multiply-adds (one rounding each), in block order:
//     Q8_0 family (Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4): acc = fma(d_w * d_a, float(sum_i w_i a_i),
//     acc) Q8_1 family (Q4_1, Q5_1):        acc = fma(d_w * d_a, float(sum_i q_i a_i), acc);
//                                      acc = fma(m_w, s_a, acc)
//     Q8_K family (Q2_K..Q6_K, IQ4_XS), per 256-block with sub-scales sc_k and mins m_k:
//       acc = fma(d * d_a, float(sum_k sc_k * sum_{i in k} w_i a_i), acc)
//       [acc = fma(-(dmin * d_a), float(sum_k m_k * bsum_k), acc)]
//   Activation quantizers (QuantizeRowFn): tensor/quantize.h's, repacked.
#pragma once

#include <cstdint>

#include "kernels/matmul_kernel.h"

namespace tandem::kernels::ref {

TANDEM_MATMUL_FLOAT_TILES(TANDEM_DECLARE_FLOAT_TILE)
void QuantizeActivationsQ8_0(const float* x, int64_t cols, const QuantizedRow& out);
void QuantizeActivationsQ8_1(const float* x, int64_t cols, const QuantizedRow& out);
void QuantizeActivationsQ8_K(const float* x, int64_t cols, const QuantizedRow& out);
// The scalar tile of every weight type of TANDEM_CODEC_TYPES (tensor/type_traits.h) whose codec
// takes quantized activations, into t.quant_tile.
void FillQuantTiles(MatMulKernelTable& t);

}  // namespace tandem::kernels::ref
