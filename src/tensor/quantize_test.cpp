// Tests for the reference quantizers: error bounds derived from each format, exact round trips
// of values on the grid, zero and outlier blocks, the API's contract. The rounding rules are in
// quantize_rounding_test.cpp.
#include "tensor/quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "tensor/dequantize.h"
#include "tensor/float16.h"
#include "tensor/quantize_test_util.h"

namespace tandem {
namespace {

using namespace quantize_testing;

// ---- Per-type bound checks (each derived from the format, stated in the comment) ----

// Q8_0/Q8_1: d = amax/127 (fp32, stored as fp16), q = round(x/d). Error ≤ d/2 from rounding
// plus |q|·|d - fp16(d)| ≤ 127·|Δd| from the stored scale.
template <typename Block>
void CheckQ8Legacy(TensorType type, const std::vector<float>& x) {
  const auto blocks = Quantize<Block>(type, x);
  const auto y = Dequantize(type, blocks.data(), x.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float* xb = &x[32 * b];
    const float d = AbsMax(xb, 32) / 127;
    ASSERT_EQ(blocks[b].d, Fp32ToFp16(d));
    const float dd = std::fabs(d - Fp16ToFp32(blocks[b].d));
    for (int i = 0; i < 32; ++i) {
      ASSERT_LE(std::fabs(y[32 * b + i] - xb[i]), d * 0.50001f + 127 * dd) << b << " " << i;
    }
  }
}

// Q4_0/Q5_0 with 2^bits levels, half = 2^(bits-1): d = max/-half (max = signed largest-|x|),
// q = min(2·half - 1, trunc(x/d + half + 0.5)). Unclamped error ≤ |d|/2; the top code is
// clamped for x/d ≥ half - 0.5, where the error is ≤ |d|. Stored-scale error ≤ half·|Δd|.
template <typename Block>
void CheckSymmetricLegacy(TensorType type, int half, const std::vector<float>& x) {
  const auto blocks = Quantize<Block>(type, x);
  const auto y = Dequantize(type, blocks.data(), x.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float* xb = &x[32 * b];
    float max = 0, amax = 0;
    for (int i = 0; i < 32; ++i) {
      if (std::fabs(xb[i]) > amax) amax = std::fabs(xb[i]), max = xb[i];
    }
    const float d = max / static_cast<float>(-half);
    const float dd = std::fabs(d - Fp16ToFp32(blocks[b].d));
    for (int i = 0; i < 32; ++i) {
      const bool clamped = d != 0 && xb[i] / d >= static_cast<float>(half) - 0.5f;
      const float bound = std::fabs(d) * (clamped ? 1.00001f : 0.50001f) + half * dd;
      ASSERT_LE(std::fabs(y[32 * b + i] - xb[i]), bound) << b << " " << i;
    }
  }
}

// Q4_1/Q5_1 with nmax = 2^bits - 1: d = (max - min)/nmax, q = round-half-up((x - min)/d).
// Error ≤ d/2 + nmax·|Δd| + |min - fp16(min)|.
template <typename Block>
void CheckAffineLegacy(TensorType type, int nmax, const std::vector<float>& x) {
  const auto blocks = Quantize<Block>(type, x);
  const auto y = Dequantize(type, blocks.data(), x.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float* xb = &x[32 * b];
    float mn = xb[0], mx = xb[0];
    for (int i = 0; i < 32; ++i) mn = std::min(mn, xb[i]), mx = std::max(mx, xb[i]);
    const float d = (mx - mn) / static_cast<float>(nmax);
    const float bound = d * 0.50001f + nmax * std::fabs(d - Fp16ToFp32(blocks[b].d)) +
                        std::fabs(mn - Fp16ToFp32(blocks[b].m)) + 1e-6f * std::fabs(mn);
    for (int i = 0; i < 32; ++i)
      ASSERT_LE(std::fabs(y[32 * b + i] - xb[i]), bound) << b << " " << i;
  }
}

// Q8_K: d = 1/(-127/max) in fp32, q = nearest_int(x·(-127/max)). Error ≤ |d|/2 (+ float
// rounding), and bsums are the exact 16-value sums of qs.
void CheckQ8K(const std::vector<float>& x) {
  const auto blocks = Quantize<BlockQ8_K>(TensorType::kQ8_K, x);
  const auto y = Dequantize(TensorType::kQ8_K, blocks.data(), x.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float ad = std::fabs(blocks[b].d);
    for (int i = 0; i < 256; ++i) {
      ASSERT_LE(std::fabs(y[256 * b + i] - x[256 * b + i]), ad * 0.50001f) << b << " " << i;
    }
    for (int k = 0; k < 16; ++k) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += blocks[b].qs[16 * k + i];
      ASSERT_EQ(blocks[b].bsums[k], sum);
    }
  }
}

// Q4_K/Q5_K: with decoded sub-block scale D = d·sc and offset M = dmin·m, a value inside the
// representable range [-M, nmax·D - M] (widened by D/2) is within D/2 of its decoded value.
// Sets *inside_fraction to the fraction of values inside that range.
template <typename Block>
void CheckKAffine(TensorType type, int nmax, const std::vector<float>& x, double* inside_fraction) {
  *inside_fraction = 0;
  const auto blocks = Quantize<Block>(type, x);
  const auto y = Dequantize(type, blocks.data(), x.size());
  int64_t inside = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      UnpackScaleMinK4(j, blocks[b].scales, &sc, &m);
      const float big_d = Fp16ToFp32(blocks[b].d) * sc;
      const float big_m = Fp16ToFp32(blocks[b].dmin) * m;
      for (int l = 0; l < 32; ++l) {
        const size_t i = 256 * b + 32 * j + l;
        const float t = big_d > 0 ? (x[i] + big_m) / big_d : -1;
        if (t < -0.5f || t > nmax + 0.5f) continue;
        ++inside;
        ASSERT_LE(std::fabs(y[i] - x[i]), big_d * 0.5001f + 1e-6f * (std::fabs(x[i]) + big_m))
            << b << " " << i;
      }
    }
  }
  *inside_fraction = static_cast<double>(inside) / static_cast<double>(x.size());
}

// Q6_K: D = d·scales[k]; a value with x/D in [-32.5, 31.5] is within |D|/2 of its decoding.
void CheckQ6K(const std::vector<float>& x, double* inside_fraction) {
  *inside_fraction = 0;
  const auto blocks = Quantize<BlockQ6_K>(TensorType::kQ6_K, x);
  const auto y = Dequantize(TensorType::kQ6_K, blocks.data(), x.size());
  int64_t inside = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int k = 0; k < 16; ++k) {
      const float big_d = Fp16ToFp32(blocks[b].d) * blocks[b].scales[k];
      for (int l = 0; l < 16; ++l) {
        const size_t i = 256 * b + 16 * k + l;
        const float t = big_d != 0 ? x[i] / big_d : 1e9f;
        if (t < -32.5f || t > 31.5f) continue;
        ++inside;
        ASSERT_LE(std::fabs(y[i] - x[i]), std::fabs(big_d) * 0.5001f + 1e-6f * std::fabs(x[i]))
            << b << " " << i;
      }
    }
  }
  *inside_fraction = static_cast<double>(inside) / static_cast<double>(x.size());
}

// Q2_K: D = d·(sc & 15), M = dmin·(sc >> 4) per 16 values; a value with (x + M)/D in
// [-0.5, 3.5] is within D/2 of its decoding.
void CheckQ2K(const std::vector<float>& x, double* inside_fraction) {
  *inside_fraction = 0;
  const auto blocks = Quantize<BlockQ2_K>(TensorType::kQ2_K, x);
  const auto y = Dequantize(TensorType::kQ2_K, blocks.data(), x.size());
  int64_t inside = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int k = 0; k < 16; ++k) {
      const float big_d = Fp16ToFp32(blocks[b].d) * (blocks[b].scales[k] & 0xF);
      const float big_m = Fp16ToFp32(blocks[b].dmin) * (blocks[b].scales[k] >> 4);
      for (int l = 0; l < 16; ++l) {
        const size_t i = 256 * b + 16 * k + l;
        const float t = big_d > 0 ? (x[i] + big_m) / big_d : -1;
        if (t < -0.5f || t > 3.5f) continue;
        ++inside;
        ASSERT_LE(std::fabs(y[i] - x[i]), big_d * 0.5001f + 1e-6f * (std::fabs(x[i]) + big_m))
            << b << " " << i;
      }
    }
  }
  *inside_fraction = static_cast<double>(inside) / static_cast<double>(x.size());
}

// Q3_K: D = d·s_k (s_k the signed 6-bit scale); a value with x/D in [-4.5, 3.5] is within
// |D|/2 of its decoding.
void CheckQ3K(const std::vector<float>& x, double* inside_fraction) {
  *inside_fraction = 0;
  const auto blocks = Quantize<BlockQ3_K>(TensorType::kQ3_K, x);
  const auto y = Dequantize(TensorType::kQ3_K, blocks.data(), x.size());
  int64_t inside = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    int8_t sc[16];
    UnpackScalesQ3K(blocks[b].scales, sc);
    for (int k = 0; k < 16; ++k) {
      const float big_d = Fp16ToFp32(blocks[b].d) * sc[k];
      for (int l = 0; l < 16; ++l) {
        const size_t i = 256 * b + 16 * k + l;
        const float t = big_d != 0 ? x[i] / big_d : 1e9f;
        if (t < -4.5f || t > 3.5f) continue;
        ++inside;
        ASSERT_LE(std::fabs(y[i] - x[i]), std::fabs(big_d) * 0.5001f + 1e-6f * std::fabs(x[i]))
            << b << " " << i;
      }
    }
  }
  *inside_fraction = static_cast<double>(inside) / static_cast<double>(x.size());
}

// IQ4_NL / IQ4_XS: every value decodes to dl·T[q] (dl the block's, or sub-block's, decoded
// scale), and T[q] is the codebook entry nearest to x/dl. The encoder chose q with the f32 scale
// before its fp16 rounding, so "nearest" holds up to that rounding: within 127·2^-10 of the best
// distance (in units of dl) plus a float epsilon.
void ExpectNearestCodebookEntry(float x, float dl, int q, const std::string& where) {
  if (dl == 0) return;
  const float t = x / dl;
  float best = INFINITY;
  for (int8_t v : kIQ4NLValues) best = std::min(best, std::fabs(t - v));
  ASSERT_LE(std::fabs(t - kIQ4NLValues[q]), best + 127.0f / 1024 + 1e-4f * std::fabs(t))
      << where << " x/dl " << t << " code " << q;
}

void CheckIQ4NL(const std::vector<float>& x) {
  const auto blocks = Quantize<BlockIQ4_NL>(TensorType::kIQ4_NL, x);
  const auto y = Dequantize(TensorType::kIQ4_NL, blocks.data(), x.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    const float d = Fp16ToFp32(blocks[b].d);
    for (int j = 0; j < 32; ++j) {
      const int q = j < 16 ? blocks[b].qs[j] & 0xF : blocks[b].qs[j - 16] >> 4;
      const size_t i = 32 * b + j;
      ASSERT_EQ(y[i], d * static_cast<float>(kIQ4NLValues[q])) << i;
      ExpectNearestCodebookEntry(x[i], d, q, "iq4_nl " + std::to_string(i));
    }
  }
}

void CheckIQ4XS(const std::vector<float>& x) {
  const auto blocks = Quantize<BlockIQ4_XS>(TensorType::kIQ4_XS, x);
  const auto y = Dequantize(TensorType::kIQ4_XS, blocks.data(), x.size());
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int ib = 0; ib < 8; ++ib) {
      const float dl = Fp16ToFp32(blocks[b].d) * UnpackScaleIQ4XS(blocks[b], ib);
      for (int j = 0; j < 32; ++j) {
        const uint8_t byte = blocks[b].qs[16 * ib + j % 16];
        const int q = j < 16 ? byte & 0xF : byte >> 4;
        const size_t i = 256 * b + 32 * ib + j;
        ASSERT_EQ(y[i], dl * static_cast<float>(kIQ4NLValues[q])) << i;
        ExpectNearestCodebookEntry(x[i], dl, q, "iq4_xs " + std::to_string(i));
      }
    }
  }
}

double RelativeRmse(const std::vector<float>& x, const std::vector<float>& y) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    err += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
    ref += static_cast<double>(x[i]) * x[i];
  }
  return std::sqrt(err / ref);
}

// Runs every bound check on `x` (a multiple of 256 values); for the K-quants at least
// `min_inside` of the values must fall inside the representable range of their sub-block.
void CheckAllBounds(const std::vector<float>& x, double min_inside) {
  CheckQ8Legacy<BlockQ8_0>(TensorType::kQ8_0, x);
  CheckQ8Legacy<BlockQ8_1>(TensorType::kQ8_1, x);
  CheckSymmetricLegacy<BlockQ4_0>(TensorType::kQ4_0, 8, x);
  CheckSymmetricLegacy<BlockQ5_0>(TensorType::kQ5_0, 16, x);
  CheckAffineLegacy<BlockQ4_1>(TensorType::kQ4_1, 15, x);
  CheckAffineLegacy<BlockQ5_1>(TensorType::kQ5_1, 31, x);
  CheckQ8K(x);
  double inside[5];
  CheckKAffine<BlockQ4_K>(TensorType::kQ4_K, 15, x, &inside[0]);
  CheckKAffine<BlockQ5_K>(TensorType::kQ5_K, 31, x, &inside[1]);
  CheckQ6K(x, &inside[2]);
  CheckQ3K(x, &inside[3]);
  CheckQ2K(x, &inside[4]);
  // Three and two bits clip more of the tails (Q2_K's fit minimises absolute error, which gives
  // the outliers less pull still): lower floors, 0.03 and 0.07 below the others'.
  for (int i = 0; i < 5; ++i)
    EXPECT_GE(inside[i], min_inside - (i == 3 ? 0.03 : i == 4 ? 0.07 : 0)) << i;
  CheckIQ4NL(x);
  CheckIQ4XS(x);
}

TEST(QuantizeTest, ErrorBoundsOnRandomData) {
  CheckAllBounds(RandomRow(256 * 64, 7), 0.97);
}

TEST(QuantizeTest, ErrorBoundsWithOneHugeValuePerBlock) {
  auto x = UniformRow(256 * 8, 11);
  for (size_t b = 0; b < x.size() / 32; ++b) x[32 * b + (b * 5) % 32] = (b % 2 ? -1e4f : 1e4f);
  // Sub-blocks next to a huge one may get a zero scale (Q6_K), so no inside-fraction floor.
  CheckAllBounds(x, 0.0);
  // The huge values themselves come back within one quantization step of their block's scale.
  const std::pair<TensorType, int> cases[] = {{TensorType::kQ8_0, 127},
                                              {TensorType::kQ4_0, 8},
                                              {TensorType::kQ4_K, 15},
                                              {TensorType::kQ6_K, 32}};
  for (auto [type, nmax] : cases) {
    std::vector<uint8_t> buf(QuantizedRowBytes(type, static_cast<int64_t>(x.size())));
    QuantizeRow(type, x.data(), buf.data(), static_cast<int64_t>(x.size()));
    const auto y = Dequantize(type, buf.data(), x.size());
    for (size_t b = 0; b < x.size() / 32; ++b) {
      const size_t i = 32 * b + (b * 5) % 32;
      EXPECT_LE(std::fabs(y[i] - x[i]), 1e4f / nmax) << TensorTypeName(type) << " " << i;
    }
  }
}

// Sanity bounds for uniform [-1, 1] data: an n-level quantizer over a range of ~2 has RMSE
// ≈ (2/n)/√12, i.e. ≈ 0.067, 0.032 and 0.016 of the RMS (0.577) for 15, 31 and 63 steps (Q4_K,
// Q5_K, Q6_K), 0.33 and 0.14 for 3 and 7 (Q2_K, Q3_K); the 15 unequal steps of the IQ4 codebook
// (widest 24/240 of its range) give at most ≈ 0.08.
TEST(QuantizeTest, KQuantRmseOnUniformData) {
  const auto x = UniformRow(256 * 32, 3);
  const struct {
    TensorType type;
    double max_rel_rmse;
  } cases[] = {{TensorType::kQ4_K, 0.08},  {TensorType::kQ5_K, 0.04}, {TensorType::kQ6_K, 0.02},
               {TensorType::kQ2_K, 0.40},  {TensorType::kQ3_K, 0.17}, {TensorType::kIQ4_NL, 0.09},
               {TensorType::kIQ4_XS, 0.09}};
  for (const auto& c : cases) {
    std::vector<uint8_t> buf(QuantizedRowBytes(c.type, static_cast<int64_t>(x.size())));
    QuantizeRow(c.type, x.data(), buf.data(), static_cast<int64_t>(x.size()));
    EXPECT_LT(RelativeRmse(x, Dequantize(c.type, buf.data(), x.size())), c.max_rel_rmse)
        << TensorTypeName(c.type);
  }
}

// ---- Exact round trips ----

void ExpectExactRoundTrip(TensorType type, const std::vector<float>& x) {
  std::vector<uint8_t> buf(QuantizedRowBytes(type, static_cast<int64_t>(x.size())));
  QuantizeRow(type, x.data(), buf.data(), static_cast<int64_t>(x.size()));
  const auto y = Dequantize(type, buf.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i]) << TensorTypeName(type) << " " << i;
}

TEST(QuantizeTest, GridValuesRoundTripExactly) {
  std::mt19937 rng(5);
  auto grid = [&](int n, int lo, int hi, float step, float offset, int forced_pos, int forced) {
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i) {
      const int q = (i % 32 == forced_pos) ? forced : lo + static_cast<int>(rng() % (hi - lo + 1));
      x[i] = offset + static_cast<float>(q) * step;
    }
    return x;
  };
  // Each block holds the code that defines its scale (largest magnitude, or min and max).
  ExpectExactRoundTrip(TensorType::kQ8_0, grid(256, -127, 127, 0.25f, 0, 3, -127));
  ExpectExactRoundTrip(TensorType::kQ8_1, grid(256, -127, 127, 0.25f, 0, 3, 127));
  ExpectExactRoundTrip(TensorType::kQ4_0, grid(256, -7, 7, 0.5f, 0, 9, -8));
  ExpectExactRoundTrip(TensorType::kQ5_0, grid(256, -15, 15, 0.25f, 0, 9, -16));
  auto q41 = grid(256, 1, 14, 0.125f, -1.0f, 0, 0);
  for (size_t b = 0; b < 8; ++b) q41[32 * b + 1] = -1.0f + 15 * 0.125f;
  ExpectExactRoundTrip(TensorType::kQ4_1, q41);
  auto q51 = grid(256, 1, 30, 0.0625f, 2.0f, 0, 0);
  for (size_t b = 0; b < 8; ++b) q51[32 * b + 1] = 2.0f + 31 * 0.0625f;
  ExpectExactRoundTrip(TensorType::kQ5_1, q51);
  ExpectExactRoundTrip(TensorType::kQ8_K, grid(512, -127, 127, 0.5f, 0, 17, 127));
  // K-quants: D = 63·2^-6 makes d = D/63 exact in fp16, so the decoded scale is D exactly.
  const float big_d = 63.0f / 64.0f;
  auto qk = [&](int nmax) {
    std::vector<float> x(512);
    for (int i = 0; i < 512; ++i) {
      const int r = i % 32;
      const int q = r == 0 ? 0 : r == 1 ? nmax : static_cast<int>(rng() % (nmax + 1));
      x[i] = static_cast<float>(q) * big_d;
    }
    return x;
  };
  ExpectExactRoundTrip(TensorType::kQ4_K, qk(15));
  ExpectExactRoundTrip(TensorType::kQ5_K, qk(31));
  // Q6_K: every 16-group holds -32·s, so each sub-scale is s and d = -s/128 (exact in fp16).
  std::vector<float> q6(512);
  for (int i = 0; i < 512; ++i) {
    const int q = i % 16 == 0 ? -32 : -31 + static_cast<int>(rng() % 63);
    q6[i] = static_cast<float>(q) * 0.25f;
  }
  ExpectExactRoundTrip(TensorType::kQ6_K, q6);
  // Q3_K: group k holds codes -4..3 times s_k = 2^-1·{1, 3/4, 1/2, 1/4}[k % 4] with -4 in it, so
  // its 6-bit scale is -32·s_k/s_0 (exact) and d = -s_0/32 is exact in fp16.
  std::vector<float> q3(512);
  for (int i = 0; i < 512; ++i) {
    const float mult[] = {1.0f, 0.75f, 0.5f, 0.25f};
    const float s_k = 0.5f * mult[(i / 16) % 4];
    const int q = i % 16 == 5 ? -4 : -3 + static_cast<int>(rng() % 7);
    q3[i] = static_cast<float>(q) * s_k;
  }
  ExpectExactRoundTrip(TensorType::kQ3_K, q3);
  // Q2_K: group k decodes as (d·sc_k)·q - dmin·m_k with d = 1/16 and dmin = 1/32 (exact in fp16:
  // the largest sc and m are 15) and each group holding codes 0 and 3, so min and max pin the fit.
  std::vector<float> q2(512);
  for (int i = 0; i < 512; ++i) {
    const int k = i / 16;
    const int sc = k % 16 == 0 ? 15 : 1 + k % 15;
    const int m = k % 16 == 1 ? 15 : (3 * k) % 16;
    const int r = i % 16;
    const int q = r == 0 ? 0 : r == 1 ? 3 : static_cast<int>(rng() % 4);
    q2[i] = (0.0625f * static_cast<float>(sc)) * static_cast<float>(q) -
            0.03125f * static_cast<float>(m);
  }
  ExpectExactRoundTrip(TensorType::kQ2_K, q2);
  // IQ4_NL: each block is d·T[q] with T[0] = -127 in it and d = 2^-3: the scale search finds d
  // exactly (its sums scale by powers of two) and fp16 keeps it.
  std::vector<float> nl(256);
  for (int i = 0; i < 256; ++i) {
    const int q = i % 32 == 7 ? 0 : static_cast<int>(rng() % 16);
    nl[i] = 0.125f * static_cast<float>(kIQ4NLValues[q]);
  }
  ExpectExactRoundTrip(TensorType::kIQ4_NL, nl);
  // IQ4_XS: sub-block ib is s_ib·T[q] with T[0] in it and s_ib = 2^-1·{1, 3/4, 1/2, 1/4}[ib % 4]:
  // d = -s_0/32 and the 6-bit scales -32·s_ib/s_0 are exact.
  std::vector<float> xs(512);
  for (int i = 0; i < 512; ++i) {
    const float mult[] = {1.0f, 0.75f, 0.5f, 0.25f};
    const float s_ib = 0.5f * mult[(i / 32) % 4];
    const int q = i % 32 == 3 ? 0 : static_cast<int>(rng() % 16);
    xs[i] = s_ib * static_cast<float>(kIQ4NLValues[q]);
  }
  ExpectExactRoundTrip(TensorType::kIQ4_XS, xs);
  // Scalars: values already representable.
  ExpectExactRoundTrip(TensorType::kF16, {1.0f, -2.5f, 65504.0f, std::ldexp(1.0f, -24)});
  ExpectExactRoundTrip(TensorType::kBF16, {1.0f, -3.0f, 10.5625f, 3.3895314e38f});
  ExpectExactRoundTrip(TensorType::kF32, {1.0f, 0.1f, -7e-30f});
}

TEST(QuantizeTest, ZeroBlocksDecodeToZero) {
  for (uint32_t id = 0; id < kTensorTypeIdLimit; ++id) {
    const auto type = static_cast<TensorType>(id);
    if (!CanQuantize(type)) continue;
    std::vector<float> x(512, 0.0f);
    for (int i = 256; i < 512; ++i)
      x[i] = 0.01f * static_cast<float>(i - 300);  // then a live block
    std::vector<uint8_t> buf(QuantizedRowBytes(type, 512), 0xAB);
    QuantizeRow(type, x.data(), buf.data(), 512);
    const auto y = Dequantize(type, buf.data(), 512);
    for (int i = 0; i < 256; ++i) ASSERT_EQ(y[i], 0.0f) << TensorTypeName(type) << " " << i;
  }
  // Q8_K zero block: d, qs and bsums all zero.
  std::vector<float> zeros(256, 0.0f);
  BlockQ8_K q8k;
  std::memset(&q8k, 0xAB, sizeof q8k);
  QuantizeRowQ8_K(zeros.data(), &q8k, 256);
  const BlockQ8_K zero_block{};
  EXPECT_EQ(std::memcmp(&q8k, &zero_block, sizeof q8k), 0);
}

// Q3_K and IQ4_XS store a signed super-scale: d < 0 when the block's dominant value is
// negative (its sub-block's scale maps it to the codes' long end, -4 or T[0] = -127, so that
// scale has the opposite sign, and d = -max_scale/32), and that sub-block's 6-bit scale is -32.
TEST(QuantizeTest, SignedSuperScales) {
  for (const float outlier : {5.0f, -5.0f}) {
    auto x = UniformRow(256, 13);
    x[40] = outlier;
    BlockQ3_K q3;
    QuantizeRowQ3_K(x.data(), &q3, 256);
    int8_t sc[16];
    UnpackScalesQ3K(q3.scales, sc);
    EXPECT_EQ(sc[2], -32) << outlier;
    EXPECT_EQ(Fp16ToFp32(q3.d) < 0, outlier < 0) << outlier;
    const auto y3 = Dequantize(TensorType::kQ3_K, &q3, 256);
    EXPECT_LE(std::fabs(y3[40] - outlier), std::fabs(Fp16ToFp32(q3.d) * 32)) << outlier;

    BlockIQ4_XS xs;
    QuantizeRowIQ4_XS(x.data(), &xs, 256);
    EXPECT_EQ(UnpackScaleIQ4XS(xs, 1), -32) << outlier;
    EXPECT_EQ(Fp16ToFp32(xs.d) < 0, outlier < 0) << outlier;
    const auto yx = Dequantize(TensorType::kIQ4_XS, &xs, 256);
    // The outlier maps to a codebook end: within a step (24/127 of it) of its value.
    EXPECT_LE(std::fabs(yx[40] - outlier), 5.0f * 24 / 127) << outlier;
    double inside = 0;
    CheckQ3K(x, &inside);
    CheckIQ4XS(x);
  }
}

// ---- API contract ----

TEST(QuantizeTest, NonFiniteInputsGiveBlocksWithoutCrashing) {
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY, 3e38f, -3e38f, 1e-45f};
  for (uint32_t id = 0; id < kTensorTypeIdLimit; ++id) {
    const auto type = static_cast<TensorType>(id);
    if (!CanQuantize(type)) continue;
    for (float s : specials) {
      auto x = UniformRow(256, id);
      x[3] = s;
      std::vector<uint8_t> buf(QuantizedRowBytes(type, 256));
      QuantizeRow(type, x.data(), buf.data(), 256);
      Dequantize(type, buf.data(), 256);  // any values, but no crash or UB (sanitizer build)
    }
  }
}

TEST(QuantizeTest, BlocksAreIndependentOfRowLength) {
  const auto x = RandomRow(256 * 4, 21);
  for (uint32_t id = 0; id < kTensorTypeIdLimit; ++id) {
    const auto type = static_cast<TensorType>(id);
    if (!CanQuantize(type)) continue;
    const int64_t n = static_cast<int64_t>(x.size());
    std::vector<uint8_t> whole(QuantizedRowBytes(type, n));
    QuantizeRow(type, x.data(), whole.data(), n);
    const int64_t qk =
        GetTensorTypeTraits(type).block_size == 1 ? 32 : GetTensorTypeTraits(type).block_size;
    std::vector<uint8_t> parts(whole.size());
    for (int64_t i = 0; i < n; i += qk) {
      QuantizeRow(type, x.data() + i, parts.data() + QuantizedRowBytes(type, i), qk);
    }
    EXPECT_EQ(whole, parts) << TensorTypeName(type);
  }
}

TEST(QuantizeTest, CanQuantizeAndErrors) {
  for (uint32_t id = 0; id < kTensorTypeIdLimit; ++id) {
    const auto traits = FindTensorTypeTraits(id);
    if (!traits) continue;
    const auto type = traits->type;
    std::vector<float> x(traits->block_size, 1.0f);
    std::vector<uint8_t> buf(traits->block_bytes);
    if (CanQuantize(type)) {
      QuantizeRow(type, x.data(), buf.data(), traits->block_size);
      continue;
    }
    try {
      QuantizeRow(type, x.data(), buf.data(), traits->block_size);
      ADD_FAILURE() << traits->name;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      EXPECT_NE(std::string(e.what()).find("unsupported tensor type " + std::string(traits->name)),
                std::string::npos);
    }
  }
  EXPECT_TRUE(CanQuantize(TensorType::kQ8_K));
  EXPECT_TRUE(CanQuantize(TensorType::kIQ4_NL));
  EXPECT_FALSE(CanQuantize(TensorType::kMXFP4));
  std::vector<float> x(64);
  std::vector<uint8_t> buf(1024);
  EXPECT_THROW(QuantizeRow(TensorType::kQ8_0, x.data(), buf.data(), 31), Error);
  EXPECT_THROW(QuantizeRow(TensorType::kQ4_K, x.data(), buf.data(), 64), Error);
  EXPECT_THROW(QuantizedRowBytes(TensorType::kQ6_K, -256), Error);
  EXPECT_EQ(QuantizedRowBytes(TensorType::kQ6_K, 512), 420u);
  EXPECT_EQ(QuantizedRowBytes(TensorType::kBF16, 3), 6u);
}

}  // namespace
}  // namespace tandem
