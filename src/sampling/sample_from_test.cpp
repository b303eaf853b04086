// Tests for the draw: its frequencies over many seeds (chi-square), replay, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/error.h"
#include "sampling/sampler.h"
#include "sampling/sampling_test_util.h"

namespace tandem {
namespace {

using sampling_test::ChiSquare;
using sampling_test::ChiSquareCritical1e6;
using sampling_test::DegreesOfFreedom;

// Zero-weight tokens at both ends and in the middle: they must never be drawn.
const std::vector<float> kProbs = {0.0f, 0.3f,  0.2f,  0.0f,  0.15f, 0.1f,
                                   0.1f, 0.08f, 0.05f, 0.02f, 0.0f};
constexpr int64_t kDraws = 40000;

// One draw per seed 1..kDraws, as a server sees one draw per fresh request.
template <typename Draw>
std::vector<int64_t> CountOverSeeds(Draw draw) {
  std::vector<int64_t> counts(kProbs.size(), 0);
  for (int64_t seed = 1; seed <= kDraws; ++seed) {
    Rng rng(static_cast<uint64_t>(seed));
    ++counts[draw(rng)];
  }
  return counts;
}

TEST(SampleFromTest, FrequenciesMatchTheDistributionOverManySeeds) {
  const std::vector<int64_t> counts =
      CountOverSeeds([](Rng& rng) { return SampleFrom(kProbs, rng); });
  const double chi = ChiSquare(counts, kProbs, kDraws);
  EXPECT_LT(chi, ChiSquareCritical1e6(DegreesOfFreedom(kProbs)));
  EXPECT_EQ(counts[0] + counts[3] + counts[10], 0);
}

TEST(SampleFromTest, FrequenciesMatchAlongOneSeedsSequence) {
  Rng rng(777);
  std::vector<int64_t> counts(kProbs.size(), 0);
  for (int64_t i = 0; i < kDraws; ++i) ++counts[SampleFrom(kProbs, rng)];
  EXPECT_LT(ChiSquare(counts, kProbs, kDraws), ChiSquareCritical1e6(DegreesOfFreedom(kProbs)));
}

TEST(SampleFromTest, TheTestRejectsAnOffByOneDraw) {
  // The same walk with `>=` shifted by one slot: it returns the token after the right one.
  const auto off_by_one = [](Rng& rng) {
    const double target = rng.Uniform();
    double cumulative = 0.0;
    for (size_t i = 0; i + 1 < kProbs.size(); ++i) {
      cumulative += kProbs[i];
      if (cumulative > target) return static_cast<int32_t>(i + 1);
    }
    return static_cast<int32_t>(kProbs.size() - 1);
  };
  const std::vector<int64_t> counts = CountOverSeeds(off_by_one);
  EXPECT_GT(ChiSquare(counts, kProbs, kDraws), ChiSquareCritical1e6(DegreesOfFreedom(kProbs)));
  // A draw that ignores the weights altogether fails too.
  const std::vector<int64_t> uniform =
      CountOverSeeds([](Rng& rng) { return static_cast<int32_t>(1 + rng.Uniform() * 9); });
  EXPECT_GT(ChiSquare(uniform, kProbs, kDraws), ChiSquareCritical1e6(DegreesOfFreedom(kProbs)));
}

TEST(SampleFromTest, UnnormalisedWeightsAndOneDrawPerToken) {
  const std::vector<float> weights = {0.0f, 2.0f, 0.0f};
  Rng rng(3);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(SampleFrom(weights, rng), 1);
  EXPECT_EQ(rng.draw_index(), 100u);
}

TEST(SampleFromTest, SameSeedSameTokens) {
  Rng a(31337), b(31337);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(SampleFrom(kProbs, a), SampleFrom(kProbs, b));
}

TEST(SampleFromTest, SamplerSampleIsDistributionThenDraw) {
  SamplingParams params;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  params.temperature = 1.0f;
  Sampler sampler(params);
  const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 0.0f};
  std::vector<float> probs(4);
  Rng a(11), b(11);
  for (int i = 0; i < 200; ++i) {
    const int32_t token = sampler.Sample(logits.data(), 4, {}, a, probs);
    EXPECT_EQ(token, SampleFrom(sampler.Distribution(logits.data(), 4, {}), b));
  }
  EXPECT_EQ(a.draw_index(), 200u);
}

TEST(SampleFromTest, BadWeightsThrow) {
  Rng rng(1);
  EXPECT_THROW(SampleFrom(std::vector<float>{}, rng), Error);
  EXPECT_THROW(SampleFrom(std::vector<float>{0.0f, 0.0f}, rng), Error);
  EXPECT_THROW(SampleFrom(std::vector<float>{0.5f, -0.1f}, rng), Error);
  EXPECT_THROW(SampleFrom(std::vector<float>{0.5f, NAN}, rng), Error);
  EXPECT_THROW(SampleFrom(std::vector<float>{0.5f, INFINITY}, rng), Error);
}

TEST(ArgmaxTest, FirstMaximumAndNansIgnored) {
  EXPECT_EQ(Argmax(std::vector<float>{1.0f, 3.0f, 3.0f}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{NAN, -1.0f, -2.0f}), 1);
  EXPECT_EQ(Argmax(std::vector<float>{-INFINITY, -INFINITY}), 0);
  EXPECT_THROW(Argmax(std::vector<float>{}), Error);
  EXPECT_THROW(Argmax(std::vector<float>{NAN}), Error);
}

}  // namespace
}  // namespace tandem
