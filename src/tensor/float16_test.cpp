// Tests for the f16/bf16 conversions: exhaustive decode/re-encode and encode against a
// double-precision rounding oracle.
#include "tensor/float16.h"

#include "base/cpu_features.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace tandem {
namespace {

uint32_t Bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
float FromBits(uint32_t u) {
  return std::bit_cast<float>(u);
}

// Independent binary16 decode via ldexp in double.
double RefHalfValue(uint16_t h) {
  const int e = (h >> 10) & 0x1F;
  const int m = h & 0x3FF;
  const double mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -mag : mag;
}

// Rounds |v| (finite, as double) to a `sig_bits`-bit significand with minimum normal exponent
// `emin` and bias `bias`, ties to even, and returns the encoding without sign; `inf` on overflow.
uint32_t RefRound(double a, int sig_bits, int emin, int bias, int emax, uint32_t inf) {
  const int frac_bits = sig_bits - 1;
  if (a < std::ldexp(1.0, emin)) {
    // Subnormal range: units of 2^(emin - frac_bits); rounding up to 2^frac_bits gives the
    // smallest normal, whose encoding is the same integer.
    return static_cast<uint32_t>(std::nearbyint(std::ldexp(a, frac_bits - emin)));
  }
  int exp;
  std::frexp(a, &exp);  // a = mant * 2^exp, mant in [0.5, 1)
  int e = exp - 1;
  double sig = std::nearbyint(std::ldexp(a, frac_bits - e));  // in [2^frac, 2^(frac+1)]
  if (sig == std::ldexp(1.0, sig_bits)) {
    sig = std::ldexp(1.0, frac_bits);
    ++e;
  }
  if (e > emax) return inf;
  return (static_cast<uint32_t>(e + bias) << frac_bits) |
         (static_cast<uint32_t>(sig) - (1u << frac_bits));
}

uint16_t RefFp16(float f) {
  const uint16_t sign = (Bits(f) >> 16) & 0x8000;
  if (std::isnan(f)) return sign | 0x7E00;
  if (std::isinf(f)) return sign | 0x7C00;
  return static_cast<uint16_t>(
      sign | RefRound(std::fabs(static_cast<double>(f)), 11, -14, 15, 15, 0x7C00));
}

uint16_t RefBf16(float f) {
  const uint16_t sign = (Bits(f) >> 16) & 0x8000;
  if (std::isnan(f)) return static_cast<uint16_t>((Bits(f) >> 16) | 0x40);
  if (std::isinf(f)) return sign | 0x7F80;
  return static_cast<uint16_t>(
      sign | RefRound(std::fabs(static_cast<double>(f)), 8, -126, 127, 127, 0x7F80));
}

// Floats around every f16 (or bf16) value: the value, the midpoint to the next one (an exact
// tie) and the floats one ulp either side of that midpoint; plus random floats, f32 subnormals
// and the overflow boundary.
std::vector<float> SweepFloats(bool bf16) {
  std::vector<float> v;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float a =
        bf16 ? Bf16ToFp32(static_cast<uint16_t>(h)) : Fp16ToFp32(static_cast<uint16_t>(h));
    const float b =
        bf16 ? Bf16ToFp32(static_cast<uint16_t>(h + 1)) : Fp16ToFp32(static_cast<uint16_t>(h + 1));
    if (!std::isfinite(a)) continue;
    v.push_back(a);
    if (!std::isfinite(b) || (h & 0x7FFF) == 0x7FFF) continue;
    const double mid = (static_cast<double>(a) + static_cast<double>(b)) / 2;
    const float m = static_cast<float>(mid);
    if (static_cast<double>(m) != mid) continue;  // (every f16/bf16 midpoint is a float)
    v.push_back(m);
    v.push_back(std::nextafter(m, 0.0f));
    v.push_back(std::nextafter(m, 2 * m));
  }
  std::mt19937 rng(1234);
  for (int i = 0; i < 2000000; ++i) v.push_back(FromBits(static_cast<uint32_t>(rng())));
  for (uint32_t u = 1; u < 0x800000; u += 4099) v.push_back(FromBits(u));
  for (float f : {65504.0f, 65519.996f, 65520.0f, 65536.0f, 1e30f, 3.4028235e38f}) {
    v.push_back(f);
    v.push_back(-f);
  }
  return v;
}

TEST(Float16Test, DecodeMatchesIeeeForAllBitPatterns) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = Fp16ToFp32(static_cast<uint16_t>(h));
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
    if (nan) {
      ASSERT_TRUE(std::isnan(f)) << h;
    } else if ((h & 0x7FFF) == 0x7C00) {
      ASSERT_TRUE(std::isinf(f)) << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0);
    } else {
      ASSERT_EQ(static_cast<double>(f), RefHalfValue(static_cast<uint16_t>(h))) << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
    }
  }
}

TEST(Float16Test, ReencodeIsIdentityExceptNanCanonicalisation) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t back = Fp32ToFp16(Fp16ToFp32(static_cast<uint16_t>(h)));
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
    ASSERT_EQ(back, nan ? ((h & 0x8000) | 0x7E00) : h) << h;
  }
}

TEST(Float16Test, EncodeMatchesDoubleRounding) {
  for (float f : SweepFloats(false)) {
    ASSERT_EQ(Fp32ToFp16(f), RefFp16(f)) << "bits 0x" << std::hex << Bits(f);
  }
}

TEST(Float16Test, EncodeKnownValues) {
  EXPECT_EQ(Fp32ToFp16(1.0f), 0x3C00);
  EXPECT_EQ(Fp32ToFp16(-2.0f), 0xC000);
  EXPECT_EQ(Fp32ToFp16(65504.0f), 0x7BFF);
  EXPECT_EQ(Fp32ToFp16(65520.0f), 0x7C00);    // tie between 65504 and 2^16: to even = inf
  EXPECT_EQ(Fp32ToFp16(65519.996f), 0x7BFF);  // just below the tie
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(Fp32ToFp16(std::ldexp(1.0f, -25)), 0x0000);         // tie with 0: to even
  EXPECT_EQ(Fp32ToFp16(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 units: tie to even = 2
  EXPECT_EQ(Fp32ToFp16(1.0f + std::ldexp(1.0f, -11)), 0x3C00);  // tie: to even (down)
  EXPECT_EQ(Fp32ToFp16(1.0f + std::ldexp(3.0f, -11)), 0x3C02);  // tie: to even (up)
  EXPECT_EQ(Fp32ToFp16(-0.0f), 0x8000);
  EXPECT_EQ(Fp32ToFp16(-std::nanf("")), 0xFE00);
  EXPECT_EQ(Fp32ToFp16(FromBits(0x7F800001)), 0x7E00);  // signalling NaN becomes quiet
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t HardwareFp16(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

TEST(Float16Test, EncodeMatchesF16cWhenAvailable) {
  if (!HostCpuFeatures().f16c) GTEST_SKIP() << "CPU has no F16C";
  for (float f : SweepFloats(false)) {
    if (std::isnan(f)) continue;  // hardware keeps the payload; ggml's software path does not
    ASSERT_EQ(Fp32ToFp16(f), HardwareFp16(f)) << "bits 0x" << std::hex << Bits(f);
  }
}
#endif

TEST(Bf16Test, DecodeAndReencodeAllBitPatterns) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = Bf16ToFp32(static_cast<uint16_t>(b));
    ASSERT_EQ(Bits(f), b << 16);
    const bool nan = (b & 0x7F80) == 0x7F80 && (b & 0x7F) != 0;
    ASSERT_EQ(Fp32ToBf16(f), nan ? (b | 0x40) : b) << b;
  }
}

TEST(Bf16Test, EncodeMatchesDoubleRounding) {
  for (float f : SweepFloats(true)) {
    ASSERT_EQ(Fp32ToBf16(f), RefBf16(f)) << "bits 0x" << std::hex << Bits(f);
  }
}

TEST(Bf16Test, EncodeKnownValues) {
  EXPECT_EQ(Fp32ToBf16(1.0f), 0x3F80);
  EXPECT_EQ(Fp32ToBf16(FromBits(0x3F808000)), 0x3F80);  // tie: to even (down)
  EXPECT_EQ(Fp32ToBf16(FromBits(0x3F818000)), 0x3F82);  // tie: to even (up)
  EXPECT_EQ(Fp32ToBf16(FromBits(0x3F808001)), 0x3F81);
  EXPECT_EQ(Fp32ToBf16(FromBits(0x7F7FFFFF)), 0x7F80);  // max float rounds to inf
  EXPECT_EQ(Fp32ToBf16(FromBits(0x00010000)), 0x0001);  // subnormal kept
  EXPECT_EQ(Fp32ToBf16(FromBits(0x7F800001)), 0x7FC0);  // quiet bit forced
  EXPECT_EQ(Fp32ToBf16(FromBits(0xFFC12345)), 0xFFC1);
}

TEST(Float16Test, ConstexprUsable) {
  static_assert(Fp32ToFp16(1.0f) == 0x3C00);
  static_assert(Fp16ToFp32(0x3C00) == 1.0f);
  static_assert(Fp32ToBf16(-2.0f) == 0xC000);
  static_assert(Bf16ToFp32(0x4040) == 3.0f);
}

}  // namespace
}  // namespace tandem
