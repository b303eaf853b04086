// The non-linear 4-bit types IQ4_NL (32-value blocks) and IQ4_XS (256-value super-blocks with
// 6-bit sub-scales): block layouts, integer unpack over the shared codebook, and encode
// (iq4.cpp). Layouts: docs/formats.md § Block layouts; encoders: § Reference quantizers (what
// llama-quantize writes without an importance matrix, bit for bit).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/float16.h"
#include "tensor/formats/codec.h"
#include "tensor/formats/kquant.h"

namespace tandem {

inline constexpr int kQK4_NL = 32;

// IQ4_NL / IQ4_XS non-linear 4-bit codebook (ascending).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

struct BlockIQ4_NL {
  uint16_t d;               // fp16 scale; x = d * kIQ4NLValues[q]
  uint8_t qs[kQK4_NL / 2];  // nibble layout as Q4_0
};

// 8 sub-blocks of 32; sub-block ib: qs[16ib + j] low -> elem 32ib+j, high -> elem 32ib+16+j.
struct BlockIQ4_XS {
  uint16_t d;                    // fp16 super-scale; dl = d * (ls - 32)
  uint16_t scales_h;             // high 2 bits of the 6-bit sub-scales (2 bits per sub-block)
  uint8_t scales_l[kQK_K / 64];  // low 4 bits of the sub-scales (nibble per sub-block)
  uint8_t qs[kQK_K / 2];         // 4-bit table indices
};

static_assert(formats::IsStoredBlock<BlockIQ4_NL>(18) && formats::IsStoredBlock<BlockIQ4_XS>(136));
static_assert(offsetof(BlockIQ4_XS, scales_l) == 4 && offsetof(BlockIQ4_XS, qs) == 8);

// IQ4_XS: signed 6-bit sub-scale (ls - 32, in -32..31) of sub-block ib (0..7).
inline int UnpackScaleIQ4XS(const BlockIQ4_XS& b, int ib) {
  const int low = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int high = (b.scales_h >> (2 * ib)) & 3;
  return (low | (high << 4)) - 32;
}

namespace formats {

struct IQ4_NL {
  using Block = BlockIQ4_NL;
  static constexpr TensorType kType = TensorType::kIQ4_NL;
  static constexpr int kValues = kQK4_NL;
  static constexpr DotFamily kDot = DotFamily::kQ8_0;
  static auto Weights(const Block&) {
    return [](int q, int) { return static_cast<int>(kIQ4NLValues[q]); };
  }
  static void Unpack(const Block& b, int w[32]) { UnpackNibbles<IQ4_NL>(b, w); }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static void Decode(const Block& b, float* y) { DecodeNibbles<IQ4_NL>(b, y); }
  static void Encode(const float* x, Block* y);
};

struct IQ4_XS {
  using Block = BlockIQ4_XS;
  static constexpr TensorType kType = TensorType::kIQ4_XS;
  static constexpr int kValues = kQK_K;
  static constexpr DotFamily kDot = DotFamily::kQ8_K;
  static constexpr bool kHasMins = false;
  // Sub-block ib (0..7) is a block of nibble pairs at qs + 16 ib, its codes through the codebook.
  static int Weight(int q, int) { return kIQ4NLValues[q]; }
  static void Unpack(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int ib = 0; ib < 8; ++ib) {
      NibblePairs(b.qs + 16 * ib, w + 32 * ib, Weight);
      sc[2 * ib] = sc[2 * ib + 1] = UnpackScaleIQ4XS(b, ib);
      m[2 * ib] = m[2 * ib + 1] = 0;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static void Decode(const Block& b, float* y) {
    const float d = Scale(b);
    for (int ib = 0; ib < 8; ++ib) {
      const float dl = d * static_cast<float>(UnpackScaleIQ4XS(b, ib));
      NibblePairs(b.qs + 16 * ib, y + 32 * ib,
                  [dl](int q, int e) { return dl * static_cast<float>(Weight(q, e)); });
    }
  }
  static void Encode(const float* x, Block* y);
};

// The encoders' row loops are instantiated in iq4.cpp, beside the encoders they inline.
extern template void EncodeBlocks<IQ4_NL>(const float*, void*, int64_t);
extern template void EncodeBlocks<IQ4_XS>(const float*, void*, int64_t);

}  // namespace formats
}  // namespace tandem
