// Tests for DequantizeRow: blocks written byte by byte from the layouts in docs/formats.md,
// decoded and compared with values from the spec's formulas and with a few worked by hand.
// All scales are powers of two and all codes small, so every expected value is exact.
#include "tensor/dequantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"

namespace tandem {
namespace {

using Bytes = std::vector<uint8_t>;

void PutU16(Bytes& b, size_t off, uint16_t v) {
  b[off] = static_cast<uint8_t>(v & 0xFF);
  b[off + 1] = static_cast<uint8_t>(v >> 8);
}

// fp16 bit patterns, written out by hand.
constexpr uint16_t kHalf0_125 = 0x3000, kHalf0_25 = 0x3400, kHalf0_5 = 0x3800, kHalf1 = 0x3C00,
                   kHalf2 = 0x4000, kHalfMinus1 = 0xBC00;

std::vector<float> Decode(TensorType type, const Bytes& b, int64_t n) {
  EXPECT_EQ(b.size(), RowBytes(GetTensorTypeTraits(type), n));
  std::vector<float> out(n, -999.0f);
  DequantizeRow(type, b.data(), out.data(), n);
  return out;
}

// Sets element e's 4-bit code in the legacy layout at `qs`: byte e%16, low nibble if e < 16.
void PutLegacyNibble(Bytes& b, size_t qs, int e, int q) {
  uint8_t& byte = b[qs + e % 16];
  byte = static_cast<uint8_t>(e < 16 ? ((byte & 0xF0) | q) : ((byte & 0x0F) | (q << 4)));
}

// Q2_K/Q3_K: element e's 2-bit code goes to bits 2j of qs[32n + l].
void PutK2Bits(Bytes& b, size_t qs, int e, int q) {
  const int r = e % 128;
  b[qs + 32 * (e / 128) + r % 32] |= static_cast<uint8_t>(q << (2 * (r / 32)));
}

// Q4_K/Q5_K: element e's low 4 bits go to qs[32c + l], low nibble for 64c+l, high for 64c+32+l.
void PutK4Nibble(Bytes& b, size_t qs, int e, int q) {
  const int c = e / 64, r = e % 64;
  b[qs + 32 * c + r % 32] |= static_cast<uint8_t>((q & 0xF) << (r < 32 ? 0 : 4));
}

// Q4_K/Q5_K scale/min packing, following the encoder description in the spec.
void PutScaleMinK4(Bytes& b, size_t s, int j, int sc, int m) {
  if (j < 4) {
    b[s + j] |= static_cast<uint8_t>(sc);
    b[s + j + 4] |= static_cast<uint8_t>(m);
  } else {
    b[s + j + 4] = static_cast<uint8_t>((sc & 0xF) | ((m & 0xF) << 4));
    b[s + j - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
    b[s + j] |= static_cast<uint8_t>((m >> 4) << 6);
  }
}

TEST(DequantizeTest, ScalarTypes) {
  const float f32[2] = {1.5f, -0.0f};
  Bytes b(8);
  std::memcpy(b.data(), f32, 8);
  const auto x = Decode(TensorType::kF32, b, 2);
  EXPECT_EQ(x[0], 1.5f);
  EXPECT_TRUE(x[1] == 0.0f && std::signbit(x[1]));

  Bytes h(8);
  PutU16(h, 0, 0x3C00);  // 1
  PutU16(h, 2, 0xC100);  // -2.5
  PutU16(h, 4, 0x7BFF);  // 65504
  PutU16(h, 6, 0x0001);  // 2^-24
  EXPECT_EQ(Decode(TensorType::kF16, h, 4),
            (std::vector<float>{1.0f, -2.5f, 65504.0f, std::ldexp(1.0f, -24)}));

  Bytes bf(6);
  PutU16(bf, 0, 0x3F80);  // 1
  PutU16(bf, 2, 0xC040);  // -3
  PutU16(bf, 4, 0x4129);  // 10.5625
  EXPECT_EQ(Decode(TensorType::kBF16, bf, 3), (std::vector<float>{1.0f, -3.0f, 10.5625f}));
}

TEST(DequantizeTest, Q4_0TwoBlocks) {
  Bytes b(18 * 2);
  for (int blk = 0; blk < 2; ++blk) {
    PutU16(b, 18 * blk, blk == 0 ? kHalf0_5 : kHalfMinus1);
    for (int e = 0; e < 32; ++e) PutLegacyNibble(b, 18 * blk + 2, e, (e * 7 + blk) % 16);
  }
  const auto x = Decode(TensorType::kQ4_0, b, 64);
  for (int e = 0; e < 64; ++e) {
    const float d = e < 32 ? 0.5f : -1.0f;
    EXPECT_EQ(x[e], static_cast<float>(((e % 32) * 7 + e / 32) % 16 - 8) * d) << e;
  }
  EXPECT_EQ(x[0], -4.0f);   // q 0: (0 - 8) * 0.5
  EXPECT_EQ(x[17], -0.5f);  // q 119 % 16 = 7: (7 - 8) * 0.5
  EXPECT_EQ(x[32], 7.0f);   // block 2, q 1: (1 - 8) * -1
}

TEST(DequantizeTest, Q4_1) {
  Bytes b(20);
  PutU16(b, 0, kHalf0_25);
  PutU16(b, 2, kHalf2);
  for (int e = 0; e < 32; ++e) PutLegacyNibble(b, 4, e, (e * 5) % 16);
  const auto x = Decode(TensorType::kQ4_1, b, 32);
  for (int e = 0; e < 32; ++e) EXPECT_EQ(x[e], static_cast<float>((e * 5) % 16) * 0.25f + 2) << e;
  EXPECT_EQ(x[3], 5.75f);  // q 15
  EXPECT_EQ(x[16], 2.0f);  // q 0
}

// qh bytes {F0 0F AA 55}: fifth bit set for elements 4-7, 8-11, 17,19,21,23, 24,26,28,30.
int Q5HighBit(int e) {
  const uint32_t qh = 0x55AA0FF0u;
  return (qh >> e) & 1;
}

TEST(DequantizeTest, Q5_0) {
  Bytes b(22);
  PutU16(b, 0, kHalf0_25);
  b[2] = 0xF0, b[3] = 0x0F, b[4] = 0xAA, b[5] = 0x55;
  for (int e = 0; e < 32; ++e) PutLegacyNibble(b, 6, e, (e * 3) % 16);
  const auto x = Decode(TensorType::kQ5_0, b, 32);
  for (int e = 0; e < 32; ++e) {
    const int q = (e * 3) % 16 + 16 * Q5HighBit(e);
    EXPECT_EQ(x[e], static_cast<float>(q - 16) * 0.25f) << e;
  }
  EXPECT_EQ(x[0], -4.0f);    // q 0
  EXPECT_EQ(x[5], 3.75f);    // nibble 15 + 16
  EXPECT_EQ(x[17], 0.75f);   // nibble 3 + 16
  EXPECT_EQ(x[31], -0.75f);  // nibble 13, no fifth bit
}

TEST(DequantizeTest, Q5_1) {
  Bytes b(24);
  PutU16(b, 0, kHalf0_5);
  PutU16(b, 2, kHalfMinus1);
  b[4] = 0xF0, b[5] = 0x0F, b[6] = 0xAA, b[7] = 0x55;
  for (int e = 0; e < 32; ++e) PutLegacyNibble(b, 8, e, (e * 3) % 16);
  const auto x = Decode(TensorType::kQ5_1, b, 32);
  for (int e = 0; e < 32; ++e) {
    const int q = (e * 3) % 16 + 16 * Q5HighBit(e);
    EXPECT_EQ(x[e], static_cast<float>(q) * 0.5f - 1) << e;
  }
  EXPECT_EQ(x[5], 14.5f);  // q 31
}

TEST(DequantizeTest, Q8_0) {
  Bytes b(34);
  PutU16(b, 0, kHalf0_125);
  for (int i = 0; i < 32; ++i) b[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(i * 8 - 128));
  const auto x = Decode(TensorType::kQ8_0, b, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(x[i], static_cast<float>(i * 8 - 128) * 0.125f);
  EXPECT_EQ(x[0], -16.0f);
  EXPECT_EQ(x[31], 15.0f);
}

TEST(DequantizeTest, Q2_K) {
  Bytes b(84);
  for (int k = 0; k < 16; ++k) b[k] = static_cast<uint8_t>(((3 * k + 1) % 16) | ((15 - k) << 4));
  for (int e = 0; e < 256; ++e) PutK2Bits(b, 16, e, (e + e / 16) % 4);
  PutU16(b, 80, kHalf1);
  PutU16(b, 82, kHalf0_5);
  const auto x = Decode(TensorType::kQ2_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const int k = e / 16;
    const float want =
        1.0f * static_cast<float>((3 * k + 1) % 16) * static_cast<float>((e + k) % 4) -
        0.5f * static_cast<float>(15 - k);
    EXPECT_EQ(x[e], want) << e;
  }
  EXPECT_EQ(x[0], -7.5f);    // sc 1, m 15, q 0
  EXPECT_EQ(x[37], 14.5f);   // sc 7, m 13, q 3: 21 - 6.5
  EXPECT_EQ(x[255], 28.0f);  // sc 14, m 0, q 2
}

TEST(DequantizeTest, Q3_K) {
  Bytes b(110);
  for (int k = 0; k < 16; ++k) {
    const int v = (k - 8) + 32;  // s_k = k - 8, stored biased
    if (k < 8) {
      b[96 + k] |= static_cast<uint8_t>(v & 0xF);
    } else {
      b[96 + k - 8] |= static_cast<uint8_t>((v & 0xF) << 4);
    }
    b[96 + 8 + k % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (k / 4)));
  }
  for (int e = 0; e < 256; ++e) {
    const int q3 = (e * 5 + 3) % 8;
    PutK2Bits(b, 32, e, q3 & 3);
    b[e % 32] |= static_cast<uint8_t>((q3 >> 2) << (e / 32));
  }
  PutU16(b, 108, kHalf0_5);
  const auto x = Decode(TensorType::kQ3_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const float want =
        0.5f * static_cast<float>(e / 16 - 8) * static_cast<float>((e * 5 + 3) % 8 - 4);
    EXPECT_EQ(x[e], want) << e;
  }
  EXPECT_EQ(x[0], 4.0f);    // s -8, q3 3 -> -1
  EXPECT_EQ(x[170], 1.0f);  // s 2, q3 5 -> 1
  EXPECT_EQ(x[255], 7.0f);  // s 7, q3 6 -> 2
}

// Shared Q4_K/Q5_K header: d 0.5, dmin 0.25, sc_j = 10 + 7j, m_j = 63 - 5j (bits 4-5 in use).
void PutKHeader(Bytes& b) {
  PutU16(b, 0, kHalf0_5);
  PutU16(b, 2, kHalf0_25);
  for (int j = 0; j < 8; ++j) PutScaleMinK4(b, 4, j, 10 + 7 * j, 63 - 5 * j);
}

float KWant(int e, int q) {
  const int j = e / 32;
  return 0.5f * static_cast<float>(10 + 7 * j) * static_cast<float>(q) -
         0.25f * static_cast<float>(63 - 5 * j);
}

TEST(DequantizeTest, Q4_K) {
  Bytes b(144);
  PutKHeader(b);
  for (int e = 0; e < 256; ++e) PutK4Nibble(b, 16, e, (e * 3 + e / 32) % 16);
  const auto x = Decode(TensorType::kQ4_K, b, 256);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(x[e], KWant(e, (e * 3 + e / 32) % 16)) << e;
  EXPECT_EQ(x[0], -15.75f);    // sc 10, m 63, q 0
  EXPECT_EQ(x[130], 179.25f);  // sc 38, m 43, q 10: 190 - 10.75
  EXPECT_EQ(x[255], 111.0f);   // sc 59, m 28, q 4: 118 - 7
}

TEST(DequantizeTest, Q5_K) {
  Bytes b(176);
  PutKHeader(b);
  for (int e = 0; e < 256; ++e) {
    const int q = (e * 5 + e / 32) % 32;
    PutK4Nibble(b, 48, e, q);
    const int c = e / 64, r = e % 64;
    b[16 + r % 32] |= static_cast<uint8_t>((q >> 4) << (2 * c + (r < 32 ? 0 : 1)));
  }
  const auto x = Decode(TensorType::kQ5_K, b, 256);
  for (int e = 0; e < 256; ++e) EXPECT_EQ(x[e], KWant(e, (e * 5 + e / 32) % 32)) << e;
  EXPECT_EQ(x[100], 344.5f);  // sc 31, m 48, q 23: 356.5 - 12
  EXPECT_EQ(x[255], 52.0f);   // sc 59, m 28, q 2: 59 - 7
}

TEST(DequantizeTest, Q6_K) {
  Bytes b(210);
  for (int e = 0; e < 256; ++e) {
    const int q = (e * 11 + 5) % 64;
    const int n = e / 128, r = e % 128, k = r / 32, l = r % 32;
    b[64 * n + l + 32 * (k & 1)] |= static_cast<uint8_t>((q & 0xF) << (k < 2 ? 0 : 4));
    b[128 + 32 * n + l] |= static_cast<uint8_t>((q >> 4) << (2 * k));
  }
  for (int k = 0; k < 16; ++k) b[192 + k] = static_cast<uint8_t>(static_cast<int8_t>((k - 8) * 9));
  PutU16(b, 208, kHalf0_25);
  const auto x = Decode(TensorType::kQ6_K, b, 256);
  for (int e = 0; e < 256; ++e) {
    const float want =
        0.25f * static_cast<float>((e / 16 - 8) * 9) * static_cast<float>((e * 11 + 5) % 64 - 32);
    EXPECT_EQ(x[e], want) << e;
  }
  EXPECT_EQ(x[0], 486.0f);    // scale -72, q 5 - 32 = -27
  EXPECT_EQ(x[200], -27.0f);  // scale 36, q 29 - 32 = -3
  EXPECT_EQ(x[255], 409.5f);  // scale 63, q 58 - 32 = 26
}

TEST(DequantizeTest, IQ4_NL) {
  Bytes b(18);
  PutU16(b, 0, kHalf2);
  for (int e = 0; e < 32; ++e) PutLegacyNibble(b, 2, e, e % 16);
  const auto x = Decode(TensorType::kIQ4_NL, b, 32);
  const int table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  for (int e = 0; e < 32; ++e) EXPECT_EQ(x[e], 2.0f * static_cast<float>(table[e % 16])) << e;
  EXPECT_EQ(x[0], -254.0f);
  EXPECT_EQ(x[24], 2.0f);
  EXPECT_EQ(x[31], 226.0f);
}

TEST(DequantizeTest, IQ4_XS) {
  Bytes b(136);
  PutU16(b, 0, kHalf0_5);
  uint16_t scales_h = 0;
  for (int ib = 0; ib < 8; ++ib) {
    const int ls = 8 * ib + 3;  // ls - 32 = 8ib - 29
    b[4 + ib / 2] |= static_cast<uint8_t>((ls & 0xF) << (4 * (ib % 2)));
    scales_h |= static_cast<uint16_t>((ls >> 4) << (2 * ib));
  }
  PutU16(b, 2, scales_h);
  for (int e = 0; e < 256; ++e) {
    const int ib = e / 32, r = e % 32;
    b[8 + 16 * ib + r % 16] |= static_cast<uint8_t>(((e * 7) % 16) << (r < 16 ? 0 : 4));
  }
  const auto x = Decode(TensorType::kIQ4_XS, b, 256);
  const int table[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
  for (int e = 0; e < 256; ++e) {
    const float want =
        0.5f * static_cast<float>(8 * (e / 32) - 29) * static_cast<float>(table[(e * 7) % 16]);
    EXPECT_EQ(x[e], want) << e;
  }
  EXPECT_EQ(x[0], 1841.5f);   // 0.5 * -29 * -127
  EXPECT_EQ(x[255], 175.5f);  // 0.5 * 27 * 13
}

// OCP E2M1 decode written from its definition (sign bit 3, magnitudes 0 .. 6).
float E2M1(int q) {
  const float mag[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  return (q & 8) ? -mag[q & 7] : mag[q & 7];
}

TEST(DequantizeTest, MXFP4IncludingSubnormalScales) {
  const int exps[3] = {127, 1, 0};
  Bytes b(17 * 3);
  for (int blk = 0; blk < 3; ++blk) {
    b[17 * blk] = static_cast<uint8_t>(exps[blk]);
    for (int e = 0; e < 32; ++e) PutLegacyNibble(b, 17 * blk + 1, e, (e + blk) % 16);
  }
  const auto x = Decode(TensorType::kMXFP4, b, 96);
  for (int i = 0; i < 96; ++i) {
    const int blk = i / 32, e = i % 32;
    EXPECT_EQ(x[i], std::ldexp(E2M1((e + blk) % 16), exps[blk] - 127)) << i;
  }
  EXPECT_EQ(x[7], 6.0f);
  EXPECT_EQ(x[15], -6.0f);
  EXPECT_EQ(x[32], std::ldexp(1.0f, -127));          // e = 1, q 1 (0.5): 2^-127, a subnormal
  EXPECT_EQ(x[64 + 5], 6 * std::ldexp(1.0f, -127));  // e = 0, q 7 (6): 12 * 2^-128
}

TEST(DequantizeTest, DispatchFollowsTheTypeTable) {
  for (uint32_t id = 0; id < kTensorTypeIdLimit + 3; ++id) {
    const auto traits = FindTensorTypeTraits(id);
    const auto type = static_cast<TensorType>(id);
    const int64_t n = traits ? traits->block_size : 32;
    Bytes zeros(traits ? traits->block_bytes : 64, 0);
    std::vector<float> out(n, 1.0f);
    if (traits && traits->dequantizable) {
      DequantizeRow(type, zeros.data(), out.data(), n);
      for (float v : out) EXPECT_EQ(v, 0.0f) << traits->name;
      continue;
    }
    try {
      DequantizeRow(type, zeros.data(), out.data(), n);
      ADD_FAILURE() << "no error for type id " << id;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      const std::string want = "unsupported tensor type " +
                               (traits ? std::string(traits->name) : "id " + std::to_string(id));
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}

TEST(DequantizeTest, RejectsRowLengthsThatAreNotWholeBlocks) {
  Bytes b(300, 0);
  std::vector<float> out(300);
  for (int64_t n : {int64_t{33}, int64_t{-32}, int64_t{1}}) {
    try {
      DequantizeRow(TensorType::kQ4_0, b.data(), out.data(), n);
      ADD_FAILURE() << n;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("q4_0"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(DequantizeRowQ6_K(nullptr, out.data(), 128), Error);
  DequantizeRow(TensorType::kQ4_K, nullptr, nullptr, 0);  // empty row: nothing to do
}

}  // namespace
}  // namespace tandem
