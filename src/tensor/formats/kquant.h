// The K-quants Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and their activation format Q8_K: super-blocks of
// 256 values with 16 sub-scales; block layouts, integer unpack, encode. Layouts:
// docs/formats.md § Block layouts; encoders (kquant.cpp): docs/formats.md § Reference quantizers.
// The encoders keep ggml's float evaluation order and nearest_int rounding (half to even) so the
// bytes match llama.cpp's for the same input.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/float16.h"
#include "tensor/formats/codec.h"

namespace tandem {

inline constexpr int kQK_K = 256;       // K-quant super-block (and IQ4_XS)
inline constexpr int kKScaleSize = 12;  // packed 6-bit scales/mins of Q4_K/Q5_K, scales of Q3_K

// x = d * sc_k * q - dmin * m_k, 16 sub-blocks of 16, q in 0..3.
struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // low nibble = scale, high nibble = min
  uint8_t qs[kQK_K / 4];       // element e: bits 2j..2j+1 of qs[32n + l] (n=e/128, j=e%128/32)
  uint16_t d;                  // fp16 super-scale of the scales
  uint16_t dmin;               // fp16 super-scale of the mins
};

// x = d * s_k * (q3 - 4), 16 sub-blocks of 16, signed 6-bit scales (see UnpackScalesQ3K).
struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];     // high bit of element e: bit e/32 of hmask[e % 32]
  uint8_t qs[kQK_K / 4];        // low 2 bits, same positions as Q2_K
  uint8_t scales[kKScaleSize];  // 16 biased 6-bit scales
  uint16_t d;                   // fp16 super-scale
};

// x = d * sc_j * q - dmin * m_j, 8 sub-blocks of 32 (see UnpackScaleMinK4).
struct BlockQ4_K {
  uint16_t d;                   // fp16 super-scale of the scales
  uint16_t dmin;                // fp16 super-scale of the mins
  uint8_t scales[kKScaleSize];  // 8 6-bit scales + 8 6-bit mins
  uint8_t qs[kQK_K / 2];        // qs[32c + l]: low nibble = elem 64c+l, high = elem 64c+32+l
};

// As Q4_K with a fifth bit: bit 2c of qh[l] -> elem 64c+l, bit 2c+1 -> elem 64c+32+l.
struct BlockQ5_K {
  uint16_t d;                   // fp16 super-scale of the scales
  uint16_t dmin;                // fp16 super-scale of the mins
  uint8_t scales[kKScaleSize];  // same packing as Q4_K
  uint8_t qh[kQK_K / 8];        // fifth bits
  uint8_t qs[kQK_K / 2];        // low nibbles, as Q4_K
};

// x = d * scales[e/16] * (q - 32), 16 sub-blocks of 16, q in 0..63.
struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];      // low 4 bits: ql[64n + l + 32(k&1)], low nibble if k<2 else high
  uint8_t qh[kQK_K / 4];      // high 2 bits: (qh[32n + l] >> 2k) & 3
  int8_t scales[kQK_K / 16];  // signed 8-bit sub-scales
  uint16_t d;                 // fp16 super-scale
};

// Activation format for K-quant dot products. Note d is binary32, not fp16.
struct BlockQ8_K {
  float d;                    // x = d * qs[i] (d may be negative)
  int8_t qs[kQK_K];           // quants
  int16_t bsums[kQK_K / 16];  // bsums[k] = sum of qs[16k .. 16k+15]
};

static_assert(formats::IsStoredBlock<BlockQ2_K>(84) && formats::IsStoredBlock<BlockQ3_K>(110));
static_assert(formats::IsStoredBlock<BlockQ4_K>(144) && formats::IsStoredBlock<BlockQ5_K>(176));
static_assert(formats::IsStoredBlock<BlockQ6_K>(210) && formats::IsStoredBlock<BlockQ8_K>(292));
static_assert(offsetof(BlockQ2_K, d) == 80 && offsetof(BlockQ2_K, dmin) == 82);
static_assert(offsetof(BlockQ3_K, scales) == 96 && offsetof(BlockQ3_K, d) == 108);
static_assert(offsetof(BlockQ4_K, qs) == 16);
static_assert(offsetof(BlockQ5_K, qh) == 16 && offsetof(BlockQ5_K, qs) == 48);
static_assert(offsetof(BlockQ6_K, scales) == 192 && offsetof(BlockQ6_K, d) == 208);
static_assert(offsetof(BlockQ8_K, bsums) == 260);

// Q4_K/Q5_K: 6-bit scale `*sc` and min `*m` of sub-block j (0..7) from the 12 packed bytes `s`.
inline void UnpackScaleMinK4(int j, const uint8_t* s, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = s[j] & 63;
    *m = s[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

// Q3_K: the 16 signed sub-scales (-32..31) from the 12 packed bytes `s`.
inline void UnpackScalesQ3K(const uint8_t* s, int8_t out[16]) {
  for (int k = 0; k < 16; ++k) {
    const int low = k < 8 ? (s[k] & 0xF) : (s[k - 8] >> 4);
    const int high = (s[8 + k % 4] >> (2 * (k / 4))) & 3;
    out[k] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
}

namespace formats {
namespace kquant_detail {

// Q4_K/Q5_K: the 8 scales and mins of sub-blocks of 32, each given to its two sub-blocks of 16.
inline void UnpackScaleMinPairs(const uint8_t* s, int sc[16], int m[16]) {
  for (int j = 0; j < 8; ++j) {
    uint8_t scale, min;
    UnpackScaleMinK4(j, s, &scale, &min);
    sc[2 * j] = sc[2 * j + 1] = scale;
    m[2 * j] = m[2 * j + 1] = min;
  }
}

// Q4_K/Q5_K decode: per sub-block j of 32, x = d * sc_j * q - dmin * m_j.
template <class F>
inline void DecodeScaleMin32(const typename F::Block& b, float* y) {
  const float d = F::Scale(b);
  const float dmin = F::Min(b);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    UnpackScaleMinK4(j, b.scales, &sc, &m);
    const float d1 = d * static_cast<float>(sc);
    const float m1 = dmin * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) y[32 * j + l] = d1 * static_cast<float>(F::Weight(b, j, l)) - m1;
  }
}

}  // namespace kquant_detail

struct Q2_K {
  using Block = BlockQ2_K;
  static constexpr TensorType kType = TensorType::kQ2_K;
  static constexpr int kValues = kQK_K;
  static constexpr DotFamily kDot = DotFamily::kQ8_K;
  static constexpr bool kHasMins = true;
  // The 2-bit code of element e; sub-block k's scale and min.
  static int Weight(const Block& b, int e) {
    const int r = e % 128;
    return (b.qs[32 * (e / 128) + r % 32] >> (2 * (r / 32))) & 3;
  }
  static int SubScale(const Block& b, int k) { return b.scales[k] & 0xF; }
  static int SubMin(const Block& b, int k) { return b.scales[k] >> 4; }
  static void Unpack(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int e = 0; e < 256; ++e) w[e] = Weight(b, e);
    for (int k = 0; k < 16; ++k) {
      sc[k] = SubScale(b, k);
      m[k] = SubMin(b, k);
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.dmin); }
  static void Decode(const Block& b, float* y) {
    const float d = Scale(b);
    const float dmin = Min(b);
    for (int e = 0; e < kQK_K; ++e) {
      const int q = Weight(b, e);
      const float dl = d * static_cast<float>(SubScale(b, e / 16));
      const float ml = dmin * static_cast<float>(SubMin(b, e / 16));
      y[e] = dl * static_cast<float>(q) - ml;
    }
  }
  static void Encode(const float* x, Block* y);
};

struct Q3_K {
  using Block = BlockQ3_K;
  static constexpr TensorType kType = TensorType::kQ3_K;
  static constexpr int kValues = kQK_K;
  static constexpr DotFamily kDot = DotFamily::kQ8_K;
  static constexpr bool kHasMins = false;
  // The signed 3-bit value (-4..3) of element e.
  static int Weight(const Block& b, int e) {
    const int r = e % 128;
    const int q2 = (b.qs[32 * (e / 128) + r % 32] >> (2 * (r / 32))) & 3;
    const int hbit = (b.hmask[e % 32] >> (e / 32)) & 1;
    return q2 - (hbit ? 0 : 4);
  }
  static void Unpack(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int e = 0; e < 256; ++e) w[e] = Weight(b, e);
    int8_t scales[16];
    UnpackScalesQ3K(b.scales, scales);
    for (int k = 0; k < 16; ++k) {
      sc[k] = scales[k];
      m[k] = 0;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static void Decode(const Block& b, float* y) {
    const float d = Scale(b);
    int8_t scales[16];
    UnpackScalesQ3K(b.scales, scales);
    for (int e = 0; e < kQK_K; ++e) {
      const float dl = d * static_cast<float>(scales[e / 16]);
      y[e] = dl * static_cast<float>(Weight(b, e));
    }
  }
  static void Encode(const float* x, Block* y);
};

struct Q4_K {
  using Block = BlockQ4_K;
  static constexpr TensorType kType = TensorType::kQ4_K;
  static constexpr int kValues = kQK_K;
  static constexpr DotFamily kDot = DotFamily::kQ8_K;
  static constexpr bool kHasMins = true;
  // The 4-bit code of element l of sub-block j (32 values each).
  static int Weight(const Block& b, int j, int l) {
    return (b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF;
  }
  static void Unpack(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int j = 0; j < 8; ++j) {
      for (int l = 0; l < 32; ++l) w[32 * j + l] = Weight(b, j, l);
    }
    kquant_detail::UnpackScaleMinPairs(b.scales, sc, m);
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.dmin); }
  static void Decode(const Block& b, float* y) { kquant_detail::DecodeScaleMin32<Q4_K>(b, y); }
  static void Encode(const float* x, Block* y);
};

struct Q5_K {
  using Block = BlockQ5_K;
  static constexpr TensorType kType = TensorType::kQ5_K;
  static constexpr int kValues = kQK_K;
  static constexpr DotFamily kDot = DotFamily::kQ8_K;
  static constexpr bool kHasMins = true;
  // The 5-bit code of element l of sub-block j (32 values each): its fifth bit is bit j of qh[l].
  static int Weight(const Block& b, int j, int l) {
    return ((b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF) + (((b.qh[l] >> j) & 1) << 4);
  }
  static void Unpack(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int j = 0; j < 8; ++j) {
      for (int l = 0; l < 32; ++l) w[32 * j + l] = Weight(b, j, l);
    }
    kquant_detail::UnpackScaleMinPairs(b.scales, sc, m);
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.dmin); }
  static void Decode(const Block& b, float* y) { kquant_detail::DecodeScaleMin32<Q5_K>(b, y); }
  static void Encode(const float* x, Block* y);
};

struct Q6_K {
  using Block = BlockQ6_K;
  static constexpr TensorType kType = TensorType::kQ6_K;
  static constexpr int kValues = kQK_K;
  static constexpr DotFamily kDot = DotFamily::kQ8_K;
  static constexpr bool kHasMins = false;
  // The signed 6-bit value (-32..31) of element e.
  static int Weight(const Block& b, int e) {
    const int half = e / 128;  // n in the layout
    const int k = (e % 128) / 32;
    const int l = e % 32;
    const uint8_t lo_byte = b.ql[64 * half + l + 32 * (k & 1)];
    const int lo = k < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
    const int hi = (b.qh[32 * half + l] >> (2 * k)) & 3;
    return (lo | (hi << 4)) - 32;
  }
  static void Unpack(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int e = 0; e < 256; ++e) w[e] = Weight(b, e);
    for (int k = 0; k < 16; ++k) {
      sc[k] = b.scales[k];
      m[k] = 0;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static void Decode(const Block& b, float* y) {
    const float d = Scale(b);
    for (int e = 0; e < kQK_K; ++e) {
      y[e] = d * static_cast<float>(b.scales[e / 16]) * static_cast<float>(Weight(b, e));
    }
  }
  static void Encode(const float* x, Block* y);
};

// The activation format of the kQ8_K family.
struct Q8_K {
  using Block = BlockQ8_K;
  static constexpr TensorType kType = TensorType::kQ8_K;
  static constexpr int kValues = kQK_K;
  static constexpr DotFamily kDot = DotFamily::kNone;
  static void Decode(const Block& b, float* y) {
    for (int j = 0; j < kQK_K; ++j) y[j] = b.d * static_cast<float>(b.qs[j]);
  }
  static void Encode(const float* x, Block* y);
};

// The encoders' row loops are instantiated in kquant.cpp, beside the encoders they inline.
extern template void EncodeBlocks<Q2_K>(const float*, void*, int64_t);
extern template void EncodeBlocks<Q3_K>(const float*, void*, int64_t);
extern template void EncodeBlocks<Q4_K>(const float*, void*, int64_t);
extern template void EncodeBlocks<Q5_K>(const float*, void*, int64_t);
extern template void EncodeBlocks<Q6_K>(const float*, void*, int64_t);
extern template void EncodeBlocks<Q8_K>(const float*, void*, int64_t);

}  // namespace formats
}  // namespace tandem
