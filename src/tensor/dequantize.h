// Scalar reference dequantization of ggml tensor rows to f32 (docs/formats.md § Block layouts),
// from the types' codecs (tensor/formats/).
//
// These are the plain twins of the SIMD kernels and their test oracle: each value is computed
// with the same float operations, in the same order, as ggml's `dequantize_row_*`.
#pragma once

#include <cstdint>

#include "tensor/blocks.h"
#include "tensor/type_traits.h"

namespace tandem {

// Decodes `n` values of type `type` from `src` into `dst[n]`.
// `n` must be a non-negative multiple of the type's block size (kInvalidArgument otherwise);
// `type` must be dequantizable per its traits (kUnsupported "unsupported tensor type X" otherwise).
// `src` holds RowBytes(type, n) bytes; it needs no particular alignment beyond the block's.
void DequantizeRow(TensorType type, const void* src, float* dst, int64_t n);

// Per-type versions. Same contract on `n`; `src` holds n / block-size blocks.
void DequantizeRowF32(const float* src, float* dst, int64_t n);
void DequantizeRowF16(const uint16_t* src, float* dst, int64_t n);
void DequantizeRowBF16(const uint16_t* src, float* dst, int64_t n);
void DequantizeRowQ4_0(const BlockQ4_0* src, float* dst, int64_t n);
void DequantizeRowQ4_1(const BlockQ4_1* src, float* dst, int64_t n);
void DequantizeRowQ5_0(const BlockQ5_0* src, float* dst, int64_t n);
void DequantizeRowQ5_1(const BlockQ5_1* src, float* dst, int64_t n);
void DequantizeRowQ8_0(const BlockQ8_0* src, float* dst, int64_t n);
void DequantizeRowQ2_K(const BlockQ2_K* src, float* dst, int64_t n);
void DequantizeRowQ3_K(const BlockQ3_K* src, float* dst, int64_t n);
void DequantizeRowQ4_K(const BlockQ4_K* src, float* dst, int64_t n);
void DequantizeRowQ5_K(const BlockQ5_K* src, float* dst, int64_t n);
void DequantizeRowQ6_K(const BlockQ6_K* src, float* dst, int64_t n);
void DequantizeRowIQ4_NL(const BlockIQ4_NL* src, float* dst, int64_t n);
void DequantizeRowIQ4_XS(const BlockIQ4_XS* src, float* dst, int64_t n);
void DequantizeRowMXFP4(const BlockMXFP4* src, float* dst, int64_t n);

// Activation formats (never stored in files, so not reachable through DequantizeRow); used to
// test the activation quantizers and as oracles for dot-product kernels.
void DequantizeRowQ8_1(const BlockQ8_1* src, float* dst, int64_t n);
void DequantizeRowQ8_K(const BlockQ8_K* src, float* dst, int64_t n);

}  // namespace tandem
