// Byte layouts of the ggml quantized blocks tandem reads or writes (docs/formats.md).
//
// Every struct is laid out exactly as in a GGUF file (little-endian, no padding); the
// static_asserts below pin sizes and field offsets. fp16 fields are raw IEEE binary16 bits
// (decode with Fp16ToFp32 from tensor/float16.h). Kernels use these structs directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tandem {

// Values per block.
inline constexpr int kQK4_0 = 32;
inline constexpr int kQK4_1 = 32;
inline constexpr int kQK5_0 = 32;
inline constexpr int kQK5_1 = 32;
inline constexpr int kQK8_0 = 32;
inline constexpr int kQK8_1 = 32;
inline constexpr int kQK4_NL = 32;
inline constexpr int kQKMxfp4 = 32;
inline constexpr int kQK_K = 256;       // K-quant super-block (and IQ4_XS)
inline constexpr int kKScaleSize = 12;  // packed 6-bit scales/mins of Q4_K/Q5_K, scales of Q3_K

// ---- 32-value legacy blocks: qs[j] low nibble = element j, high nibble = element j+16 ----

struct BlockQ4_0 {
  uint16_t d;              // fp16 scale; x = (q - 8) * d
  uint8_t qs[kQK4_0 / 2];  // 4-bit quants
};

struct BlockQ4_1 {
  uint16_t d;              // fp16 scale; x = q * d + m
  uint16_t m;              // fp16 minimum
  uint8_t qs[kQK4_1 / 2];  // 4-bit quants
};

struct BlockQ5_0 {
  uint16_t d;              // fp16 scale; x = (q - 16) * d
  uint8_t qh[4];           // bit e of the LE u32 = bit 4 of element e
  uint8_t qs[kQK5_0 / 2];  // low 4 bits
};

struct BlockQ5_1 {
  uint16_t d;              // fp16 scale; x = q * d + m
  uint16_t m;              // fp16 minimum
  uint8_t qh[4];           // bit e of the LE u32 = bit 4 of element e
  uint8_t qs[kQK5_1 / 2];  // low 4 bits
};

struct BlockQ8_0 {
  uint16_t d;         // fp16 scale; x = qs[i] * d
  int8_t qs[kQK8_0];  // quants
};

// Activation format for Q4_1/Q5_1 dot products.
struct BlockQ8_1 {
  uint16_t d;         // fp16 scale; x = qs[i] * d
  uint16_t s;         // fp16 of d * sum(qs), with the fp32 d
  int8_t qs[kQK8_1];  // quants
};

// ---- K-quants: super-blocks of 256 ----

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

// ---- Non-linear and FP4 ----

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

struct BlockMXFP4 {
  uint8_t e;                 // E8M0 exponent; x = kMxfp4Values[q] * 2^(e - 128)
  uint8_t qs[kQKMxfp4 / 2];  // nibble layout as Q4_0; each nibble is an E2M1 code
};

// ---- Layout checks (sizes must equal the type table in type_traits.cpp) ----

#define TANDEM_CHECK_BLOCK(T, bytes)                             \
  static_assert(sizeof(T) == (bytes), #T " has the wrong size"); \
  static_assert(std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T>, #T)
TANDEM_CHECK_BLOCK(BlockQ4_0, 18);
TANDEM_CHECK_BLOCK(BlockQ4_1, 20);
TANDEM_CHECK_BLOCK(BlockQ5_0, 22);
TANDEM_CHECK_BLOCK(BlockQ5_1, 24);
TANDEM_CHECK_BLOCK(BlockQ8_0, 34);
TANDEM_CHECK_BLOCK(BlockQ8_1, 36);
TANDEM_CHECK_BLOCK(BlockQ2_K, 84);
TANDEM_CHECK_BLOCK(BlockQ3_K, 110);
TANDEM_CHECK_BLOCK(BlockQ4_K, 144);
TANDEM_CHECK_BLOCK(BlockQ5_K, 176);
TANDEM_CHECK_BLOCK(BlockQ6_K, 210);
TANDEM_CHECK_BLOCK(BlockQ8_K, 292);
TANDEM_CHECK_BLOCK(BlockIQ4_NL, 18);
TANDEM_CHECK_BLOCK(BlockIQ4_XS, 136);
TANDEM_CHECK_BLOCK(BlockMXFP4, 17);
#undef TANDEM_CHECK_BLOCK

static_assert(offsetof(BlockQ5_0, qs) == 6 && offsetof(BlockQ5_1, qs) == 8);
static_assert(offsetof(BlockQ8_1, qs) == 4);
static_assert(offsetof(BlockQ2_K, d) == 80 && offsetof(BlockQ2_K, dmin) == 82);
static_assert(offsetof(BlockQ3_K, scales) == 96 && offsetof(BlockQ3_K, d) == 108);
static_assert(offsetof(BlockQ4_K, qs) == 16);
static_assert(offsetof(BlockQ5_K, qh) == 16 && offsetof(BlockQ5_K, qs) == 48);
static_assert(offsetof(BlockQ6_K, scales) == 192 && offsetof(BlockQ6_K, d) == 208);
static_assert(offsetof(BlockQ8_K, bsums) == 260);
static_assert(offsetof(BlockIQ4_XS, scales_l) == 4 && offsetof(BlockIQ4_XS, qs) == 8);

// ---- Tables and small unpack helpers ----

// IQ4_NL / IQ4_XS non-linear 4-bit codebook (ascending).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// MXFP4 E2M1 values doubled to integers (bit 3 = sign); multiply by E8M0ToFp32Half(e).
inline constexpr int8_t kMxfp4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// Half the E8M0 scale, 2^(e - 128), exactly (e = 0 and 1 give the subnormals 2^-128, 2^-127).
inline float E8M0ToFp32Half(uint8_t e) {
  const uint32_t bits = e < 2 ? (0x00200000u << e) : (static_cast<uint32_t>(e - 1) << 23);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

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

// IQ4_XS: signed 6-bit sub-scale (ls - 32, in -32..31) of sub-block ib (0..7).
inline int UnpackScaleIQ4XS(const BlockIQ4_XS& b, int ib) {
  const int low = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int high = (b.scales_h >> (2 * ib)) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace tandem
