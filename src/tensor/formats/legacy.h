// The 32-value "legacy" types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and the activation format Q8_1:
// block layouts, integer unpack, encode. Layouts: docs/formats.md § Block layouts; encoders:
// docs/formats.md § Reference quantizers.
//
// qs[j]: low nibble = element j, high nibble = element j + 16. The encoders keep ggml's float
// evaluation order and rounding (roundf, half away from zero, or truncation) so the bytes match
// llama.cpp's for the same input.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensor/float16.h"
#include "tensor/formats/codec.h"

namespace tandem {

inline constexpr int kQK4_0 = 32;
inline constexpr int kQK4_1 = 32;
inline constexpr int kQK5_0 = 32;
inline constexpr int kQK5_1 = 32;
inline constexpr int kQK8_0 = 32;
inline constexpr int kQK8_1 = 32;

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

static_assert(formats::IsStoredBlock<BlockQ4_0>(18) && formats::IsStoredBlock<BlockQ4_1>(20));
static_assert(formats::IsStoredBlock<BlockQ5_0>(22) && formats::IsStoredBlock<BlockQ5_1>(24));
static_assert(formats::IsStoredBlock<BlockQ8_0>(34) && formats::IsStoredBlock<BlockQ8_1>(36));
static_assert(offsetof(BlockQ5_0, qs) == 6 && offsetof(BlockQ5_1, qs) == 8);
static_assert(offsetof(BlockQ8_1, qs) == 4);

namespace formats {
namespace legacy_detail {

inline uint32_t HighBits(const uint8_t qh[4]) {
  uint32_t bits;
  std::memcpy(&bits, qh, sizeof bits);
  return bits;
}

// C's `min(hi, (int)v)` for the codes, where valid inputs give v >= 0. Out-of-range and NaN
// arguments (from non-finite inputs) are clamped instead of being undefined behaviour.
inline int TruncCode(float v, int hi) {
  if (!(v > 0)) return 0;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(v);
}

// roundf(v) as an int8 code (|v| <= 127 for valid inputs); NaN gives 0.
inline int8_t RoundCode(float v) {
  if (std::isnan(v)) return 0;
  return static_cast<int8_t>(std::clamp(std::roundf(v), -128.0f, 127.0f));
}

// "Min" types: smallest and largest value of a block.
inline void MinMax(const float* x, int n, float* min, float* max) {
  *min = 3.402823466e+38f;
  *max = -3.402823466e+38f;
  for (int i = 0; i < n; ++i) {
    if (x[i] < *min) *min = x[i];
    if (x[i] > *max) *max = x[i];
  }
}

// Packs bit 4 of each of the 32 codes q[32] into a little-endian u32 (bit e = element e).
inline void PackHighBits(const int* q, uint8_t qh[4]) {
  uint32_t bits = 0;
  for (int e = 0; e < 32; ++e) bits |= static_cast<uint32_t>((q[e] >> 4) & 1) << e;
  std::memcpy(qh, &bits, sizeof bits);
}

// Packs 32 codes (0..15 after masking) with element j low and j + 16 high in qs[j].
inline void PackNibblePairs(const int* q, uint8_t qs[16]) {
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}

// Q8_0 and Q8_1 share d and qs; returns the fp32 d.
template <typename Block>
inline float EncodeBlock8(const float* x, Block* y) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0 ? 1.0f / d : 0.0f;
  y->d = Fp32ToFp16(d);
  for (int j = 0; j < 32; ++j) y->qs[j] = RoundCode(x[j] * id);
  return d;
}

}  // namespace legacy_detail

struct Q4_0 {
  using Block = BlockQ4_0;
  static constexpr TensorType kType = TensorType::kQ4_0;
  static constexpr int kValues = kQK4_0;
  static constexpr DotFamily kDot = DotFamily::kQ8_0;
  static auto Weights(const Block&) {
    return [](int q, int) { return q - 8; };
  }
  static void Unpack(const Block& b, int w[32]) { UnpackNibbles<Q4_0>(b, w); }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static void Decode(const Block& b, float* y) { DecodeNibbles<Q4_0>(b, y); }
  static void Encode(const float* x, Block* y) {
    using namespace legacy_detail;
    float max, amax;
    SignedAbsMax(x, kQK4_0, &max, &amax);
    const float d = max / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y->d = Fp32ToFp16(d);
    int q[kQK4_0];
    for (int j = 0; j < kQK4_0; ++j) q[j] = TruncCode(x[j] * id + 8.5f, 15);
    PackNibblePairs(q, y->qs);
  }
};

struct Q4_1 {
  using Block = BlockQ4_1;
  static constexpr TensorType kType = TensorType::kQ4_1;
  static constexpr int kValues = kQK4_1;
  static constexpr DotFamily kDot = DotFamily::kQ8_1;
  static auto Weights(const Block&) {
    return [](int q, int) { return q; };
  }
  static void Unpack(const Block& b, int w[32]) { UnpackNibbles<Q4_1>(b, w); }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.m); }
  static void Decode(const Block& b, float* y) { DecodeNibbles<Q4_1>(b, y); }
  static void Encode(const float* x, Block* y) {
    using namespace legacy_detail;
    float min, max;
    MinMax(x, kQK4_1, &min, &max);
    const float d = (max - min) / 15;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y->d = Fp32ToFp16(d);
    y->m = Fp32ToFp16(min);
    int q[kQK4_1];
    for (int j = 0; j < kQK4_1; ++j) q[j] = TruncCode((x[j] - min) * id + 0.5f, 15);
    PackNibblePairs(q, y->qs);
  }
};

struct Q5_0 {
  using Block = BlockQ5_0;
  static constexpr TensorType kType = TensorType::kQ5_0;
  static constexpr int kValues = kQK5_0;
  static constexpr DotFamily kDot = DotFamily::kQ8_0;
  static auto Weights(const Block& b) {
    return [qh = legacy_detail::HighBits(b.qh)](int q, int e) {
      return (q | static_cast<int>(((qh >> e) & 1) << 4)) - 16;
    };
  }
  static void Unpack(const Block& b, int w[32]) { UnpackNibbles<Q5_0>(b, w); }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static void Decode(const Block& b, float* y) { DecodeNibbles<Q5_0>(b, y); }
  static void Encode(const float* x, Block* y) {
    using namespace legacy_detail;
    float max, amax;
    SignedAbsMax(x, kQK5_0, &max, &amax);
    const float d = max / -16;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y->d = Fp32ToFp16(d);
    int q[kQK5_0];
    for (int j = 0; j < kQK5_0; ++j) q[j] = TruncCode(x[j] * id + 16.5f, 31);
    PackNibblePairs(q, y->qs);
    PackHighBits(q, y->qh);
  }
};

struct Q5_1 {
  using Block = BlockQ5_1;
  static constexpr TensorType kType = TensorType::kQ5_1;
  static constexpr int kValues = kQK5_1;
  static constexpr DotFamily kDot = DotFamily::kQ8_1;
  static auto Weights(const Block& b) {
    return [qh = legacy_detail::HighBits(b.qh)](int q, int e) {
      return q | static_cast<int>(((qh >> e) & 1) << 4);
    };
  }
  static void Unpack(const Block& b, int w[32]) { UnpackNibbles<Q5_1>(b, w); }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.m); }
  static void Decode(const Block& b, float* y) { DecodeNibbles<Q5_1>(b, y); }
  static void Encode(const float* x, Block* y) {
    using namespace legacy_detail;
    float min, max;
    MinMax(x, kQK5_1, &min, &max);
    const float d = (max - min) / 31;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    y->d = Fp32ToFp16(d);
    y->m = Fp32ToFp16(min);
    int q[kQK5_1];
    // ggml does not clamp here: (max - min) * id + 0.5 stays below 32 for finite input.
    for (int j = 0; j < kQK5_1; ++j) q[j] = TruncCode((x[j] - min) * id + 0.5f, 31);
    PackNibblePairs(q, y->qs);
    PackHighBits(q, y->qh);
  }
};

struct Q8_0 {
  using Block = BlockQ8_0;
  static constexpr TensorType kType = TensorType::kQ8_0;
  static constexpr int kValues = kQK8_0;
  static constexpr DotFamily kDot = DotFamily::kQ8_0;
  static void Unpack(const Block& b, int w[32]) {
    for (int j = 0; j < 32; ++j) w[j] = b.qs[j];
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static void Decode(const Block& b, float* y) {
    const float d = Scale(b);
    for (int j = 0; j < kQK8_0; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
  }
  static void Encode(const float* x, Block* y) { legacy_detail::EncodeBlock8(x, y); }
};

// The activation format of the kQ8_1 family: Q8_0's codes plus s = fp16(d * sum(qs)).
struct Q8_1 {
  using Block = BlockQ8_1;
  static constexpr TensorType kType = TensorType::kQ8_1;
  static constexpr int kValues = kQK8_1;
  static constexpr DotFamily kDot = DotFamily::kNone;
  static void Decode(const Block& b, float* y) {
    const float d = Fp16ToFp32(b.d);
    for (int j = 0; j < kQK8_1; ++j) y[j] = static_cast<float>(b.qs[j]) * d;
  }
  static void Encode(const float* x, Block* y) {
    const float d = legacy_detail::EncodeBlock8(x, y);
    int sum = 0;
    for (int j = 0; j < kQK8_1; ++j) sum += y->qs[j];
    y->s = Fp32ToFp16(static_cast<float>(sum) * d);
  }
};

}  // namespace formats
}  // namespace tandem
