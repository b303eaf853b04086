// Exact software conversions between binary32 and the 16-bit float formats f16 and bf16.
#pragma once

#include <bit>
#include <cstdint>

namespace tandem {

// binary32 -> IEEE binary16, round-to-nearest-even. Subnormal results are produced exactly,
// values that round beyond 65504 become ±inf, and NaN becomes the quiet NaN 0x7E00 | sign
// (docs/formats.md § Scalar formats; the same results as F16C `vcvtps2ph` with round-to-nearest).
constexpr uint16_t Fp32ToFp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00u;   // NaN
  if (a >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to inf (and inf itself)
  if (a < 0x38800000u) {
    // Below 2^-14: the result is a binary16 subnormal (or zero, or the smallest normal after
    // rounding up). Its integer mantissa is round(value * 2^24) = round(m * 2^(e - 126)).
    const uint32_t e = a >> 23;
    if (e < 102) return sign;  // value < 2^-25: rounds to zero (ties impossible)
    const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return static_cast<uint16_t>(sign | q);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits; a carry
  // out of the mantissa correctly bumps the exponent.
  uint32_t h = (((a >> 23) - 112) << 10) | ((a >> 13) & 0x3FFu);
  const uint32_t rem = a & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

// IEEE binary16 -> binary32, exact (every f16 is representable; NaN payloads are kept).
constexpr float Fp16ToFp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu;
  uint32_t m = h & 0x3FFu;
  if (e == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (m << 13));  // inf / NaN
  if (e != 0) return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
  if (m == 0) return std::bit_cast<float>(sign);  // ±0
  // Subnormal m * 2^-24: normalise so the leading 1 sits at bit 10.
  uint32_t exp = 113;  // biased binary32 exponent of 2^-14
  while ((m & 0x400u) == 0) {
    m <<= 1;
    --exp;
  }
  return std::bit_cast<float>(sign | (exp << 23) | ((m & 0x3FFu) << 13));
}

// binary32 -> bf16 (the high half), round-to-nearest-even; NaN keeps its high half with the
// quiet bit (bit 6) forced on. Overflow rounds to ±inf naturally. Subnormals are kept.
constexpr uint16_t Fp32ToBf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((u >> 16) | 64);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

// bf16 -> binary32, exact.
constexpr float Bf16ToFp32(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace tandem
