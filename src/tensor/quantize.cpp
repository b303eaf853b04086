// Row quantization: the type table's row loops (tensor/type_traits.cpp), each its codec's block
// encode (tensor/formats/).
#include "tensor/quantize.h"

#include <string>

#include "base/error.h"
#include "tensor/formats/codec.h"
#include "tensor/formats/float_types.h"

namespace tandem {
namespace {

template <class F>
void EncodeRow(const float* src, void* dst, int64_t n) {
  CheckRowLength(F::kType, n, "QuantizeRow");
  formats::EncodeBlocks<F>(src, dst, n / F::kValues);
}

}  // namespace

void QuantizeRowF16(const float* src, uint16_t* dst, int64_t n) {
  EncodeRow<formats::F16>(src, dst, n);
}
void QuantizeRowBF16(const float* src, uint16_t* dst, int64_t n) {
  EncodeRow<formats::BF16>(src, dst, n);
}
void QuantizeRowQ4_0(const float* src, BlockQ4_0* dst, int64_t n) {
  EncodeRow<formats::Q4_0>(src, dst, n);
}
void QuantizeRowQ4_1(const float* src, BlockQ4_1* dst, int64_t n) {
  EncodeRow<formats::Q4_1>(src, dst, n);
}
void QuantizeRowQ5_0(const float* src, BlockQ5_0* dst, int64_t n) {
  EncodeRow<formats::Q5_0>(src, dst, n);
}
void QuantizeRowQ5_1(const float* src, BlockQ5_1* dst, int64_t n) {
  EncodeRow<formats::Q5_1>(src, dst, n);
}
void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  EncodeRow<formats::Q8_0>(src, dst, n);
}
void QuantizeRowQ8_1(const float* src, BlockQ8_1* dst, int64_t n) {
  EncodeRow<formats::Q8_1>(src, dst, n);
}
void QuantizeRowQ2_K(const float* src, BlockQ2_K* dst, int64_t n) {
  EncodeRow<formats::Q2_K>(src, dst, n);
}
void QuantizeRowQ3_K(const float* src, BlockQ3_K* dst, int64_t n) {
  EncodeRow<formats::Q3_K>(src, dst, n);
}
void QuantizeRowQ4_K(const float* src, BlockQ4_K* dst, int64_t n) {
  EncodeRow<formats::Q4_K>(src, dst, n);
}
void QuantizeRowQ5_K(const float* src, BlockQ5_K* dst, int64_t n) {
  EncodeRow<formats::Q5_K>(src, dst, n);
}
void QuantizeRowQ6_K(const float* src, BlockQ6_K* dst, int64_t n) {
  EncodeRow<formats::Q6_K>(src, dst, n);
}
void QuantizeRowQ8_K(const float* src, BlockQ8_K* dst, int64_t n) {
  EncodeRow<formats::Q8_K>(src, dst, n);
}
void QuantizeRowIQ4_NL(const float* src, BlockIQ4_NL* dst, int64_t n) {
  EncodeRow<formats::IQ4_NL>(src, dst, n);
}
void QuantizeRowIQ4_XS(const float* src, BlockIQ4_XS* dst, int64_t n) {
  EncodeRow<formats::IQ4_XS>(src, dst, n);
}

bool CanQuantize(TensorType type) {
  const auto traits = FindTensorTypeTraits(static_cast<uint32_t>(type));
  return traits && traits->codec.encode;
}

size_t QuantizedRowBytes(TensorType type, int64_t n) {
  CheckRowLength(type, n, "QuantizedRowBytes");
  return RowBytes(GetTensorTypeTraits(type), static_cast<uint64_t>(n));
}

void QuantizeRow(TensorType type, const float* src, void* dst, int64_t n) {
  const uint32_t id = static_cast<uint32_t>(type);
  const auto traits = FindTensorTypeTraits(id);
  if (!traits || !traits->codec.encode) {
    Fail(ErrorKind::kUnsupported,
         "unsupported tensor type " +
             (traits ? std::string(traits->name) : "id " + std::to_string(id)) + " (QuantizeRow)");
  }
  CheckRowLength(type, n, "QuantizeRow");
  traits->codec.encode(src, dst, n / traits->block_size);
}

}  // namespace tandem
