// Row dequantization: the type table's row loops (tensor/type_traits.cpp), each its codec's
// block decode (tensor/formats/).
#include "tensor/dequantize.h"

#include <string>

#include "base/error.h"
#include "tensor/formats/codec.h"
#include "tensor/formats/float_types.h"

namespace tandem {
namespace {

template <class F>
void DecodeRow(const void* src, float* dst, int64_t n) {
  CheckRowLength(F::kType, n, "DequantizeRow");
  formats::DecodeBlocks<F>(src, dst, n / F::kValues);
}

}  // namespace

void DequantizeRowF32(const float* src, float* dst, int64_t n) {
  DecodeRow<formats::F32>(src, dst, n);
}
void DequantizeRowF16(const uint16_t* src, float* dst, int64_t n) {
  DecodeRow<formats::F16>(src, dst, n);
}
void DequantizeRowBF16(const uint16_t* src, float* dst, int64_t n) {
  DecodeRow<formats::BF16>(src, dst, n);
}
void DequantizeRowQ4_0(const BlockQ4_0* src, float* dst, int64_t n) {
  DecodeRow<formats::Q4_0>(src, dst, n);
}
void DequantizeRowQ4_1(const BlockQ4_1* src, float* dst, int64_t n) {
  DecodeRow<formats::Q4_1>(src, dst, n);
}
void DequantizeRowQ5_0(const BlockQ5_0* src, float* dst, int64_t n) {
  DecodeRow<formats::Q5_0>(src, dst, n);
}
void DequantizeRowQ5_1(const BlockQ5_1* src, float* dst, int64_t n) {
  DecodeRow<formats::Q5_1>(src, dst, n);
}
void DequantizeRowQ8_0(const BlockQ8_0* src, float* dst, int64_t n) {
  DecodeRow<formats::Q8_0>(src, dst, n);
}
void DequantizeRowQ8_1(const BlockQ8_1* src, float* dst, int64_t n) {
  DecodeRow<formats::Q8_1>(src, dst, n);
}
void DequantizeRowQ2_K(const BlockQ2_K* src, float* dst, int64_t n) {
  DecodeRow<formats::Q2_K>(src, dst, n);
}
void DequantizeRowQ3_K(const BlockQ3_K* src, float* dst, int64_t n) {
  DecodeRow<formats::Q3_K>(src, dst, n);
}
void DequantizeRowQ4_K(const BlockQ4_K* src, float* dst, int64_t n) {
  DecodeRow<formats::Q4_K>(src, dst, n);
}
void DequantizeRowQ5_K(const BlockQ5_K* src, float* dst, int64_t n) {
  DecodeRow<formats::Q5_K>(src, dst, n);
}
void DequantizeRowQ6_K(const BlockQ6_K* src, float* dst, int64_t n) {
  DecodeRow<formats::Q6_K>(src, dst, n);
}
void DequantizeRowQ8_K(const BlockQ8_K* src, float* dst, int64_t n) {
  DecodeRow<formats::Q8_K>(src, dst, n);
}
void DequantizeRowIQ4_NL(const BlockIQ4_NL* src, float* dst, int64_t n) {
  DecodeRow<formats::IQ4_NL>(src, dst, n);
}
void DequantizeRowIQ4_XS(const BlockIQ4_XS* src, float* dst, int64_t n) {
  DecodeRow<formats::IQ4_XS>(src, dst, n);
}
void DequantizeRowMXFP4(const BlockMXFP4* src, float* dst, int64_t n) {
  DecodeRow<formats::MXFP4>(src, dst, n);
}

void DequantizeRow(TensorType type, const void* src, float* dst, int64_t n) {
  const uint32_t id = static_cast<uint32_t>(type);
  const auto traits = FindTensorTypeTraits(id);
  if (!traits || !traits->codec.decode) {
    Fail(ErrorKind::kUnsupported,
         "unsupported tensor type " +
             (traits ? std::string(traits->name) : "id " + std::to_string(id)) +
             " (DequantizeRow)");
  }
  CheckRowLength(type, n, "DequantizeRow");
  traits->codec.decode(src, dst, n / traits->block_size);
}

}  // namespace tandem
