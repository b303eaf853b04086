// Tests for the reference quantizers: error bounds derived from each format, exact round trips
// of values on the grid, zero and outlier blocks, and the two rounding rules (roundf vs
// nearest_int) that bit-exactness with ggml depends on.
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

namespace tandem {
namespace {

// Mixed test data: uniform, Gaussian, and sparse outliers 20x larger.
std::vector<float> RandomRow(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::normal_distribution<float> gauss(0.0f, 0.5f);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) {
    const int kind = static_cast<int>(rng() % 100);
    x[i] = kind < 50 ? uni(rng) : kind < 98 ? gauss(rng) : 20.0f * uni(rng);
  }
  return x;
}

std::vector<float> UniformRow(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = uni(rng);
  return x;
}

template <typename Block>
std::vector<Block> Quantize(TensorType type, const std::vector<float>& x) {
  std::vector<Block> blocks(x.size() / GetTensorTypeTraits(type).block_size);
  QuantizeRow(type, x.data(), blocks.data(), static_cast<int64_t>(x.size()));
  return blocks;
}

std::vector<float> Dequantize(TensorType type, const void* blocks, size_t n) {
  std::vector<float> y(n);
  if (type == TensorType::kQ8_1) {
    DequantizeRowQ8_1(static_cast<const BlockQ8_1*>(blocks), y.data(), static_cast<int64_t>(n));
  } else if (type == TensorType::kQ8_K) {
    DequantizeRowQ8_K(static_cast<const BlockQ8_K*>(blocks), y.data(), static_cast<int64_t>(n));
  } else {
    DequantizeRow(type, blocks, y.data(), static_cast<int64_t>(n));
  }
  return y;
}

float AbsMax(const float* x, int n) {
  float a = 0;
  for (int i = 0; i < n; ++i) a = std::max(a, std::fabs(x[i]));
  return a;
}

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
  double inside[3];
  CheckKAffine<BlockQ4_K>(TensorType::kQ4_K, 15, x, &inside[0]);
  CheckKAffine<BlockQ5_K>(TensorType::kQ5_K, 31, x, &inside[1]);
  CheckQ6K(x, &inside[2]);
  for (double f : inside) EXPECT_GE(f, min_inside);
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
// ≈ (2/n)/√12, i.e. ≈ 0.067, 0.032 and 0.016 of the RMS (0.577) for 15, 31 and 63 steps.
TEST(QuantizeTest, KQuantRmseOnUniformData) {
  const auto x = UniformRow(256 * 32, 3);
  const struct {
    TensorType type;
    double max_rel_rmse;
  } cases[] = {{TensorType::kQ4_K, 0.08}, {TensorType::kQ5_K, 0.04}, {TensorType::kQ6_K, 0.02}};
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

// ---- Rounding rules ----

TEST(QuantizeTest, NearestIntRoundsHalfToEven) {
  EXPECT_EQ(NearestInt(0.5f), 0);
  EXPECT_EQ(NearestInt(1.5f), 2);
  EXPECT_EQ(NearestInt(2.5f), 2);
  EXPECT_EQ(NearestInt(-0.5f), 0);
  EXPECT_EQ(NearestInt(-1.5f), -2);
  EXPECT_EQ(NearestInt(-2.5f), -2);
  EXPECT_EQ(NearestInt(1.4999999f), 1);
  EXPECT_EQ(NearestInt(-127.0f), -127);
  EXPECT_EQ(NearestInt(4194303.0f), 4194303);
}

TEST(QuantizeTest, Q8_0RoundsHalfAwayFromZero) {
  // amax = 127 makes d = 1 and 1/d = 1, so the codes are roundf(x) directly.
  std::vector<float> x(32, 0.0f);
  const float in[] = {127, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -1.5f, 0.49999997f, -126.5f};
  const int want[] = {127, 3, -3, 1, -1, 2, -2, 0, -127};
  std::copy(std::begin(in), std::end(in), x.begin());
  BlockQ8_0 b0;
  QuantizeRowQ8_0(x.data(), &b0, 32);
  BlockQ8_1 b1;
  QuantizeRowQ8_1(x.data(), &b1, 32);
  EXPECT_EQ(b0.d, 0x3C00);
  int sum = 0;
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(b0.qs[i], want[i]) << in[i];
    EXPECT_EQ(b1.qs[i], want[i]) << in[i];
    sum += want[i];
  }
  EXPECT_EQ(b1.s, Fp32ToFp16(static_cast<float>(sum)));  // s = d * sum(qs), d = 1
}

TEST(QuantizeTest, Q8_KRoundsHalfToEven) {
  // max = -127 makes iscale = 1 and d = 1.
  std::vector<float> x(256, 0.0f);
  const float in[] = {-127, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, 3.5f, 126.5f};
  const int want[] = {-127, 2, -2, 0, 0, 2, 4, 126};
  std::copy(std::begin(in), std::end(in), x.begin());
  BlockQ8_K b;
  QuantizeRowQ8_K(x.data(), &b, 256);
  EXPECT_EQ(b.d, 1.0f);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b.qs[i], want[i]) << in[i];
  EXPECT_EQ(b.bsums[0], -127 + 2 - 2 + 0 + 0 + 2 + 4 + 126);
}

TEST(QuantizeTest, Q8_KNegativeScaleForPositiveMax) {
  std::vector<float> x(256, 0.0f);
  x[0] = 127.0f;
  x[1] = -63.5f;
  BlockQ8_K b;
  QuantizeRowQ8_K(x.data(), &b, 256);
  EXPECT_EQ(b.d, -1.0f);  // iscale = -127/127
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[1], 64);  // nearest_int(63.5) = 64 (even)
}

TEST(QuantizeTest, Q4_0TruncationRoundsHalfUp) {
  // max = -8 makes d = 1; q = trunc(x + 8.5), so ties go up: 0.5 -> 1, -0.5 -> 0, -1.5 -> -1.
  std::vector<float> x(32, 0.0f);
  const float in[] = {-8, 0.5f, -0.5f, 1.5f, -1.5f, 7.5f, 7.0f};
  const float want[] = {-8, 1, 0, 2, -1, 7, 7};  // 7.5 is clamped to code 15
  std::copy(std::begin(in), std::end(in), x.begin());
  std::vector<BlockQ4_0> b(1);
  QuantizeRowQ4_0(x.data(), b.data(), 32);
  EXPECT_EQ(b[0].d, 0x3C00);
  const auto y = Dequantize(TensorType::kQ4_0, b.data(), 32);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(y[i], want[i]) << in[i];
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
  EXPECT_FALSE(CanQuantize(TensorType::kIQ4_NL));
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
