#include "speculative/draft_length_controller.h"

#include <gtest/gtest.h>

#include <random>

namespace tandem {
namespace {

// Feeds the controller a machine where a draft step costs `draft_ms` and verifying T rows costs
// verify1_ms * (1 + per_row * (T - 1)), and each draft is accepted with probability `accept`
// (given the ones before it were), from a fixed random stream.
struct Machine {
  double draft_ms = 1.0, verify1_ms = 20.0, per_row = 0.02, accept = 0.0;
  mutable std::mt19937 rng{1};

  // Runs `rounds` rounds; returns how many drafted at all, and the total drafts.
  std::pair<int, int> Run(DraftLengthController& c, int rounds, int cap = 16) const {
    int drafting_rounds = 0, drafts = 0;
    for (int r = 0; r < rounds; ++r) {
      const int n = c.Choose(cap);
      EXPECT_GE(n, 0);
      EXPECT_LE(n, cap);
      if (n > 0) {
        ++drafting_rounds;
        drafts += n;
        c.RecordDraftTime(n, n * draft_ms);
        int accepted = 0;
        while (accepted < n && std::uniform_real_distribution<double>(0, 1)(rng) < accept) {
          ++accepted;
        }
        c.RecordRound(n, accepted);
      }
      c.RecordVerifyTime(n + 1, verify1_ms * (1 + per_row * n));
    }
    return {drafting_rounds, drafts};
  }
};

TEST(DraftLengthController, FixedAlwaysDraftsTheMaximumWithinTheCap) {
  DraftLengthController c(5, /*adaptive=*/false);
  EXPECT_EQ(c.Choose(16), 5);
  EXPECT_EQ(c.Choose(3), 3);
  EXPECT_EQ(c.Choose(0), 0);
  c.RecordRound(5, 0);
  EXPECT_EQ(c.Choose(16), 5);
}

TEST(DraftLengthController, ExpectedTokensFollowTheConditionalAcceptance) {
  DraftLengthController c(4, true);
  for (int i = 0; i < 200; ++i) c.RecordRound(4, 4);  // always all accepted
  EXPECT_NEAR(c.ConditionalAcceptance(0), 1.0, 0.02);
  EXPECT_NEAR(c.ExpectedTokens(4), 5.0, 0.2);
  EXPECT_DOUBLE_EQ(c.ExpectedTokens(0), 1.0);
}

TEST(DraftLengthController, ZeroAcceptanceFallsBackToPlainDecodingWithRareProbes) {
  DraftLengthController c(16, true);
  const auto [drafting, drafts] = Machine{.accept = 0.0}.Run(c, 1000);
  // A few rounds to learn, then probes at doubling intervals (8, 16, ... 256 rounds).
  EXPECT_LE(drafting, 12);
  EXPECT_LE(drafts, 30);
  EXPECT_EQ(c.Choose(16), 0);
}

TEST(DraftLengthController, AStaleSlowPlainStepDoesNotMakeFailingDraftsLookFree) {
  // verify(1) measured while weights were paged in (slow), then never again while drafting; a
  // later verify(2) reads faster than that stale figure. Zero acceptance must still go plain.
  DraftLengthController c(4, true);
  c.RecordVerifyTime(1, 60.0);
  for (int r = 0; r < 200; ++r) {
    const int n = c.Choose(4);
    if (n > 0) {
      c.RecordDraftTime(n, 0.3 * n);
      c.RecordRound(n, 0);
      c.RecordVerifyTime(n + 1, 41.0 + n);
    }
  }
  int drafting = 0;
  for (int r = 0; r < 256; ++r) drafting += c.Choose(4) > 0 ? 1 : 0;
  EXPECT_LE(drafting, 2);
}

TEST(DraftLengthController, HighAcceptanceDraftsLong) {
  DraftLengthController c(16, true);
  Machine m{.accept = 1.0};
  m.Run(c, 100);
  EXPECT_GE(c.Choose(16), 8);
  EXPECT_EQ(c.Choose(5), 5);  // the cap still rules
}

TEST(DraftLengthController, ExpensiveDraftsAreNotWorthIt) {
  // A draft step as dear as a target step and half the drafts accepted: plain decoding wins.
  DraftLengthController c(8, true);
  const auto [drafting, drafts] = Machine{.draft_ms = 20.0, .accept = 0.5}.Run(c, 500);
  EXPECT_LE(drafting, 40);
  (void)drafts;
}

TEST(DraftLengthController, StaticCostsIgnoreMeasuredTimes) {
  DraftLengthController a(8, true), b(8, true);
  a.UseStaticCosts(0.05);
  b.UseStaticCosts(0.05);
  for (int r = 0; r < 50; ++r) {
    const int na = a.Choose(8), nb = b.Choose(8);
    ASSERT_EQ(na, nb) << "round " << r;
    a.RecordVerifyTime(na + 1, 1000.0 * (r % 7));  // wild timings on one side only
    a.RecordDraftTime(na, 50.0 * (r % 3));
    const int accepted = na / 2;
    a.RecordRound(na, accepted);
    b.RecordRound(nb, accepted);
  }
}

}  // namespace
}  // namespace tandem
