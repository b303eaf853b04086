// Reference quantizers from f32, bit-exact with ggml's `quantize_row_*_ref` (docs/formats.md),
// from the types' codecs (tensor/formats/).
//
// Used for activation rows (Q8_0, Q8_1, Q8_K: the vec_dot types of §2.7) and for writing weight
// files without an importance matrix. Rounding follows ggml exactly: legacy types use roundf
// (half away from zero) or truncation as documented; K-quants use nearest_int (half to even).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/blocks.h"
#include "tensor/type_traits.h"

namespace tandem {

// True for the types QuantizeRow can produce: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL, IQ4_XS: those whose codec has an encoder.
bool CanQuantize(TensorType type);

// Encodes `src[n]` as type `type` into `dst` (RowBytes(type, n) bytes).
// `n` must be a non-negative multiple of the block size (kInvalidArgument otherwise); a type
// with CanQuantize false throws kUnsupported. Inputs are expected to be finite: NaN or inf
// give unspecified (but memory-safe) blocks.
void QuantizeRow(TensorType type, const float* src, void* dst, int64_t n);

// Bytes QuantizeRow writes for `n` values (same `n` contract).
size_t QuantizedRowBytes(TensorType type, int64_t n);

// Per-type versions; same contract on `n`, `dst` holds n / block-size blocks (or n scalars).
void QuantizeRowF16(const float* src, uint16_t* dst, int64_t n);
void QuantizeRowBF16(const float* src, uint16_t* dst, int64_t n);
void QuantizeRowQ4_0(const float* src, BlockQ4_0* dst, int64_t n);
void QuantizeRowQ4_1(const float* src, BlockQ4_1* dst, int64_t n);
void QuantizeRowQ5_0(const float* src, BlockQ5_0* dst, int64_t n);
void QuantizeRowQ5_1(const float* src, BlockQ5_1* dst, int64_t n);
void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n);
void QuantizeRowQ8_1(const float* src, BlockQ8_1* dst, int64_t n);
void QuantizeRowQ2_K(const float* src, BlockQ2_K* dst, int64_t n);
void QuantizeRowQ3_K(const float* src, BlockQ3_K* dst, int64_t n);
void QuantizeRowQ4_K(const float* src, BlockQ4_K* dst, int64_t n);
void QuantizeRowQ5_K(const float* src, BlockQ5_K* dst, int64_t n);
void QuantizeRowQ6_K(const float* src, BlockQ6_K* dst, int64_t n);
void QuantizeRowQ8_K(const float* src, BlockQ8_K* dst, int64_t n);
void QuantizeRowIQ4_NL(const float* src, BlockIQ4_NL* dst, int64_t n);
void QuantizeRowIQ4_XS(const float* src, BlockIQ4_XS* dst, int64_t n);

}  // namespace tandem
