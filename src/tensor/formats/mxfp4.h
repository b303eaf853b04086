// MXFP4 (OCP microscaling FP4): 32 E2M1 codes sharing one E8M0 exponent; block layout and
// integer unpack (docs/formats.md § Block layouts). tandem reads it; it does not write it.
#pragma once

#include <cstdint>
#include <cstring>

#include "tensor/formats/codec.h"

namespace tandem {

inline constexpr int kQKMxfp4 = 32;

// MXFP4 E2M1 values doubled to integers (bit 3 = sign); multiply by E8M0ToFp32Half(e).
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

struct BlockMXFP4 {
  uint8_t e;                 // E8M0 exponent; x = kMxfp4Values[q] * 2^(e - 128)
  uint8_t qs[kQKMxfp4 / 2];  // nibble layout as Q4_0; each nibble is an E2M1 code
};

static_assert(formats::IsStoredBlock<BlockMXFP4>(17));

// Half the E8M0 scale, 2^(e - 128), exactly (e = 0 and 1 give the subnormals 2^-128, 2^-127).
inline float E8M0ToFp32Half(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

namespace formats {

struct MXFP4 {
  using Block = BlockMXFP4;
  static constexpr TensorType kType = TensorType::kMXFP4;
  static constexpr int kValues = kQKMxfp4;
  static constexpr DotFamily kDot = DotFamily::kQ8_0;
  static auto Weights(const Block&) {
    return [](int q, int) { return static_cast<int>(kMxfp4Values[q]); };
  }
  static void Unpack(const Block& b, int w[32]) { UnpackNibbles<MXFP4>(b, w); }
  static float Scale(const Block& b) { return E8M0ToFp32Half(b.e); }
  static void Decode(const Block& b, float* y) { DecodeNibbles<MXFP4>(b, y); }
};

}  // namespace formats
}  // namespace tandem
