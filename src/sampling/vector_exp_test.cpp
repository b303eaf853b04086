// The sampler's vector e^x against double precision, at its edges, and lane by lane.
#include "sampling/vector_exp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace tandem::sampling {
namespace {

// Distance in units in the last place between two finite floats of the same sign.
int64_t UlpDistance(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  return std::llabs(static_cast<int64_t>(ia) - ib);
}

TEST(VectorExpTest, WithinOneUlpOfDoublePrecisionOverTheWholeRange) {
  std::vector<float> x;
  for (float v = -103.9f; v < 88.7f; v += 0.00071f) x.push_back(v);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> small(-0.4f, 0.4f);
  for (int i = 0; i < 100000; ++i) x.push_back(small(rng));  // around 0, where sums are made
  std::vector<float> y(x.size());
  ExpRow(x.data(), x.size(), 0.0f, 1.0f, y.data());
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const auto expected = static_cast<float>(std::exp(static_cast<double>(x[i])));
    if (expected < 1.1754944e-38f) {  // subnormal results: an absolute bound instead
      EXPECT_NEAR(y[i], expected, 3e-45f) << "x = " << x[i];
      continue;
    }
    worst = std::max(worst, UlpDistance(y[i], expected));
    ASSERT_LE(UlpDistance(y[i], expected), 1) << "x = " << x[i];
  }
  EXPECT_GT(worst, 0);  // (it is not libm's correctly rounded exp: the bound is what is tested)
}

TEST(VectorExpTest, EdgesAndSpecialValues) {
  EXPECT_EQ(Exp(0.0f), 1.0f);
  EXPECT_EQ(Exp(-0.0f), 1.0f);
  EXPECT_EQ(Exp(-INFINITY), 0.0f);
  EXPECT_EQ(Exp(-104.5f), 0.0f);
  EXPECT_EQ(Exp(-1e30f), 0.0f);
  EXPECT_EQ(Exp(INFINITY), INFINITY);
  EXPECT_EQ(Exp(88.8f), INFINITY);
  EXPECT_TRUE(std::isnan(Exp(NAN)));
  EXPECT_GT(Exp(-103.0f), 0.0f);  // subnormal, not flushed
  EXPECT_LT(Exp(88.72f), INFINITY);
  EXPECT_NEAR(Exp(1.0f), 2.7182817f, 3e-7f);
}

TEST(VectorExpTest, EveryLaneAndTailGivesTheScalarBits) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> any(-110.0f, 90.0f);
  for (size_t n = 1; n <= 41; ++n) {
    std::vector<float> x(n), y(n);
    for (float& v : x) v = any(rng);
    ExpRow(x.data(), n, 1.5f, 0.8f, y.data());
    for (size_t i = 0; i < n; ++i) {
      const float expected = Exp((x[i] - 1.5f) / 0.8f);
      EXPECT_EQ(std::memcmp(&y[i], &expected, 4), 0) << "n = " << n << ", lane " << i;
    }
  }
}

}  // namespace
}  // namespace tandem::sampling
