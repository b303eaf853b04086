// Tests for speculative sampling: "draft from q, accept or resample against p" emits tokens
// distributed as p (chi-square over many seeds), plus the exact edge cases.
#include "speculative/speculative_accept.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "sampling/sampler.h"
#include "sampling/sampling_test_util.h"

namespace tandem {
namespace {

using sampling_test::ChiSquare;
using sampling_test::ChiSquareCritical1e6;
using sampling_test::DegreesOfFreedom;

// q has mass where p has none (token 5) and none where p has some (token 2).
const std::vector<float> kP = {0.35f, 0.25f, 0.2f, 0.1f, 0.1f, 0.0f};
const std::vector<float> kQ = {0.1f, 0.4f, 0.0f, 0.2f, 0.1f, 0.2f};
constexpr int64_t kRounds = 40000;

struct Tally {
  std::vector<int64_t> counts = std::vector<int64_t>(kP.size(), 0);
  int64_t accepted = 0;
};

// One speculative position per seed: draft from q with the request's Rng, then verify.
template <typename Verify>
Tally RunRounds(const std::vector<float>& p, const std::vector<float>& q, Verify verify) {
  Tally tally;
  std::vector<float> residual(p.size());
  for (int64_t seed = 1; seed <= kRounds; ++seed) {
    Rng rng(static_cast<uint64_t>(seed));
    const int32_t draft = SampleFrom(q, rng);
    const SpeculativeOutcome outcome = verify(p, q, draft, rng, residual);
    ++tally.counts[outcome.token];
    tally.accepted += outcome.accepted;
    if (outcome.accepted) {
      EXPECT_EQ(outcome.token, draft);
    }
  }
  return tally;
}

TEST(SpeculativeAcceptTest, EmittedTokensAreDistributedAsTheTarget) {
  const Tally tally = RunRounds(kP, kQ, SpeculativeAccept);
  EXPECT_LT(ChiSquare(tally.counts, kP, kRounds), ChiSquareCritical1e6(DegreesOfFreedom(kP)));
  EXPECT_EQ(tally.counts[5], 0);
  // Acceptance rate is sum(min(p, q)) = 0.55; six binomial standard deviations of slack.
  const double rate = static_cast<double>(tally.accepted) / kRounds;
  EXPECT_NEAR(rate, 0.55, 6.0 * std::sqrt(0.55 * 0.45 / kRounds));
}

TEST(SpeculativeAcceptTest, TheTestRejectsWrongRules) {
  // Resampling from p instead of the residual over-weights the tokens q already proposes.
  const auto resample_from_p = [](std::span<const float> p, std::span<const float> q, int32_t draft,
                                  Rng& rng, std::span<float>) {
    if (rng.Uniform() * q[draft] < p[draft]) return SpeculativeOutcome{true, draft};
    return SpeculativeOutcome{false, SampleFrom(p, rng)};
  };
  const int dof = DegreesOfFreedom(kP);
  EXPECT_GT(ChiSquare(RunRounds(kP, kQ, resample_from_p).counts, kP, kRounds),
            ChiSquareCritical1e6(dof));
  // Always accepting emits q.
  const auto always = [](std::span<const float>, std::span<const float>, int32_t draft, Rng&,
                         std::span<float>) {
    return SpeculativeOutcome{true, draft};
  };
  EXPECT_GT(ChiSquare(RunRounds(kP, kQ, always).counts, kP, kRounds), ChiSquareCritical1e6(dof));
}

TEST(SpeculativeAcceptTest, GreedyDrafterAgainstASampledTarget) {
  // q one-hot (a greedy drafter): accepted with probability p(x); rejections draw from p
  // without x. The emitted tokens are still distributed as p.
  const std::vector<float> q = {0.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  const Tally tally = RunRounds(kP, q, SpeculativeAccept);
  EXPECT_LT(ChiSquare(tally.counts, kP, kRounds), ChiSquareCritical1e6(DegreesOfFreedom(kP)));
}

TEST(SpeculativeAcceptTest, PointMassDraftIsLossless) {
  // An empty q is a point mass at the draft (prompt lookup proposes one token, deterministic):
  // accepted with probability p(x), and the emitted tokens are distributed as p for every
  // proposal, including one p gives no mass (token 5) and p's likeliest (token 0).
  for (int32_t proposal : {0, 1, 3, 5}) {
    Tally tally;
    std::vector<float> residual(kP.size());
    for (int64_t seed = 1; seed <= kRounds; ++seed) {
      Rng rng(static_cast<uint64_t>(seed));
      const SpeculativeOutcome o = SpeculativeAccept(kP, {}, proposal, rng, residual);
      ++tally.counts[o.token];
      tally.accepted += o.accepted;
      if (o.accepted) {
        EXPECT_EQ(o.token, proposal);
      }
    }
    EXPECT_LT(ChiSquare(tally.counts, kP, kRounds), ChiSquareCritical1e6(DegreesOfFreedom(kP)))
        << "proposal " << proposal;
    const double px = kP[proposal], rate = static_cast<double>(tally.accepted) / kRounds;
    EXPECT_NEAR(rate, px, 6.0 * std::sqrt(px * (1 - px) / kRounds) + 1e-9) << proposal;
  }
}

TEST(SpeculativeAcceptTest, PointMassIsTheOneHotRuleExactly) {
  // The same draws and the same tokens as passing the V-sized one-hot q.
  std::vector<float> residual(kP.size()), one_hot_residual(kP.size());
  for (int32_t proposal = 0; proposal < static_cast<int32_t>(kP.size()); ++proposal) {
    std::vector<float> one_hot(kP.size(), 0.0f);
    one_hot[proposal] = 1.0f;
    for (uint64_t seed = 1; seed <= 2000; ++seed) {
      Rng a(seed), b(seed);
      const SpeculativeOutcome x = SpeculativeAccept(kP, {}, proposal, a, residual);
      const SpeculativeOutcome y = SpeculativeAccept(kP, one_hot, proposal, b, one_hot_residual);
      ASSERT_EQ(x.accepted, y.accepted);
      ASSERT_EQ(x.token, y.token);
      ASSERT_EQ(a.draw_index(), b.draw_index());
      if (!x.accepted) {
        ASSERT_EQ(residual, one_hot_residual);
      }
    }
  }
  // The check rejects a wrong point-mass rule: resampling from p itself after a rejection.
  Tally wrong;
  for (int64_t seed = 1; seed <= kRounds; ++seed) {
    Rng rng(static_cast<uint64_t>(seed));
    wrong.counts[rng.Uniform() < kP[0] ? 0 : SampleFrom(kP, rng)]++;
  }
  EXPECT_GT(ChiSquare(wrong.counts, kP, kRounds), ChiSquareCritical1e6(DegreesOfFreedom(kP)));
}

TEST(SpeculativeAcceptTest, GreedyTargetAcceptsOnlyItsArgmax) {
  const std::vector<float> p = {0.0f, 0.0f, 1.0f, 0.0f};
  const std::vector<float> q = {0.25f, 0.25f, 0.25f, 0.25f};
  std::vector<float> residual(4);
  Rng rng(5);
  for (int32_t draft = 0; draft < 4; ++draft) {
    const SpeculativeOutcome outcome = SpeculativeAccept(p, q, draft, rng, residual);
    EXPECT_EQ(outcome.accepted, draft == 2);
    EXPECT_EQ(outcome.token, 2);
  }
}

TEST(SpeculativeAcceptTest, IdenticalDistributionsAlwaysAccept) {
  std::vector<float> residual(kP.size());
  Rng rng(9);
  for (int i = 0; i < 1000; ++i) {
    const int32_t draft = SampleFrom(kP, rng);
    EXPECT_TRUE(SpeculativeAccept(kP, kP, draft, rng, residual).accepted);
  }
}

TEST(SpeculativeAcceptTest, ResidualIsNormalisedPositivePart) {
  std::vector<float> residual(3);
  ResidualDistribution(std::vector<float>{0.5f, 0.5f, 0.0f}, std::vector<float>{0.25f, 0.5f, 0.25f},
                       residual);
  EXPECT_EQ(residual, (std::vector<float>{1.0f, 0.0f, 0.0f}));
  ResidualDistribution(std::vector<float>{0.6f, 0.3f, 0.1f}, std::vector<float>{0.2f, 0.2f, 0.6f},
                       residual);
  EXPECT_NEAR(residual[0], 0.8f, 1e-6);
  EXPECT_NEAR(residual[1], 0.2f, 1e-6);
  EXPECT_EQ(residual[2], 0.0f);
  // p == q: falls back to p.
  std::vector<float> fallback(kP.size());
  ResidualDistribution(kP, kP, fallback);
  EXPECT_EQ(fallback, kP);
}

TEST(SpeculativeAcceptTest, ResidualOfSparseRowsIsThePlainLoopsBitwise) {
  // Top-k rows over a large vocabulary (the zero blocks are skipped), against the definition
  // computed element by element.
  std::mt19937 rng(21);
  for (int round = 0; round < 300; ++round) {
    const size_t n = 1 + rng() % 3000;
    std::vector<float> p(n, 0.0f), q(n, 0.0f);
    for (size_t k = 0; k < 1 + rng() % 50; ++k) {
      p[rng() % n] = static_cast<float>(1 + rng() % 1000) / 997.0f;
      q[rng() % n] = static_cast<float>(1 + rng() % 1000) / 991.0f;
    }
    std::vector<float> expected(n), residual(n, -1.0f);
    double total = 0.0;
    for (size_t i = 0; i < n; ++i) total += expected[i] = std::max(0.0f, p[i] - q[i]);
    if (total > 0.0) {
      for (float& r : expected) r = static_cast<float>(r / total);
    } else {
      expected = p;
    }
    ResidualDistribution(p, q, residual);
    ASSERT_EQ(std::memcmp(residual.data(), expected.data(), n * sizeof(float)), 0)
        << "round " << round << ", n = " << n;
  }
}

TEST(SpeculativeAcceptTest, BadInputThrows) {
  std::vector<float> residual(kP.size());
  Rng rng(1);
  EXPECT_THROW(SpeculativeAccept(kP, kQ, -1, rng, residual), Error);
  EXPECT_THROW(SpeculativeAccept(kP, kQ, 6, rng, residual), Error);
  const std::vector<float> short_q = {1.0f};
  EXPECT_THROW(SpeculativeAccept(kP, short_q, 0, rng, residual), Error);
  std::vector<float> short_residual(2);
  EXPECT_THROW(ResidualDistribution(kP, kQ, short_residual), Error);
}

}  // namespace
}  // namespace tandem
