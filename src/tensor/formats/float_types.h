// The float types F32, F16 and BF16 as codecs, one value per block; the conversions are
// tensor/float16.h's (docs/formats.md § Scalar formats).
#pragma once

#include <cstdint>

#include "tensor/float16.h"
#include "tensor/formats/codec.h"

namespace tandem::formats {

struct F32 {
  using Block = float;
  static constexpr TensorType kType = TensorType::kF32;
  static constexpr int kValues = 1;
  static constexpr DotFamily kDot = DotFamily::kNone;
  static void Decode(const Block& b, float* y) { *y = b; }
  static void Encode(const float* x, Block* y) { *y = *x; }
};

struct F16 {
  using Block = uint16_t;
  static constexpr TensorType kType = TensorType::kF16;
  static constexpr int kValues = 1;
  static constexpr DotFamily kDot = DotFamily::kNone;
  static void Decode(const Block& b, float* y) { *y = Fp16ToFp32(b); }
  static void Encode(const float* x, Block* y) { *y = Fp32ToFp16(*x); }
};

struct BF16 {
  using Block = uint16_t;
  static constexpr TensorType kType = TensorType::kBF16;
  static constexpr int kValues = 1;
  static constexpr DotFamily kDot = DotFamily::kNone;
  static void Decode(const Block& b, float* y) { *y = Bf16ToFp32(b); }
  static void Encode(const float* x, Block* y) { *y = Fp32ToBf16(*x); }
};

}  // namespace tandem::formats
