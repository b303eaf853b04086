#include "speculative/speculative_round.h"

#include <gtest/gtest.h>

#include <vector>

namespace tandem {
namespace {

// A drafter that is never asked to draft here: prompt lookup proposes the drafts.
class LookupOnly : public Drafter {
 public:
  void Draft(const DraftRequest&, const KvCache&, DraftResult&) override {}
  double BytesPerStep() const override { return 1.0; }
};

RoundParams FixedLookup(bool greedy) {
  RoundParams p;
  p.spec.type = SpecType::kNgram;
  p.spec.adaptive = false;
  p.spec.draft_max = 8;
  p.spec.ngram_min = 2;
  p.sampling.temperature = greedy ? 0.0f : 1.0f;
  return p;
}

// A history whose end recurs earlier, so lookup proposes a long draft.
std::vector<int32_t> RepeatingHistory() {
  std::vector<int32_t> h;
  for (int r = 0; r < 4; ++r) {
    for (int32_t t = 1; t <= 6; ++t) h.push_back(t);
  }
  h.pop_back();
  return h;
}

TEST(SpeculativeRound, DraftsThatDoNotFitTheStepAreShortenedOnlyWhereThatCannotChangeTheOutput) {
  LookupOnly drafter;
  const std::vector<int32_t> history = RepeatingHistory();
  SpeculationStats stats;
  for (const bool greedy : {true, false}) {
    SpeculativeRound round;
    round.Start(&drafter, FixedLookup(greedy), GrammarConstraint{}, 7, 32, 64, 1.0);
    ASSERT_TRUE(round.speculating());
    // Room for everything: the fixed draft length, greedy or sampled alike.
    const int full = round.PlanRound(/*room=*/100, /*budget=*/100, 1, history, stats);
    EXPECT_GT(full, 2) << "greedy " << greedy;
    EXPECT_TRUE(round.NeedsDrafter());
    // Three rows in the step: greedy verification keeps the target's argmax, so two drafts
    // do; a sampled request with a fixed length must draft exactly that length, so it waits.
    const int tight = round.PlanRound(100, 3, 1, history, stats);
    if (greedy) {
      EXPECT_EQ(tight, 2);
      EXPECT_TRUE(round.NeedsDrafter());
    } else {
      EXPECT_EQ(tight, -1);
      EXPECT_FALSE(round.NeedsDrafter());
      EXPECT_EQ(round.drafted(), 0);
    }
    // The request's room (tokens left, the context) caps the drafts for both.
    EXPECT_EQ(round.PlanRound(/*room=*/1, 100, 1, history, stats), 1);
  }
}

TEST(SpeculativeRound, WithoutADrafterOrAGrammarNothingIsDrafted) {
  SpeculativeRound round;
  RoundParams p = FixedLookup(true);
  p.spec.type = SpecType::kNone;
  LookupOnly drafter;
  round.Start(&drafter, p, GrammarConstraint{}, 7, 32, 64, 1.0);
  EXPECT_FALSE(round.speculating());
  SpeculationStats stats;
  EXPECT_EQ(round.PlanRound(100, 100, 1, RepeatingHistory(), stats), 0);
  EXPECT_FALSE(round.NeedsDrafter());
}

}  // namespace
}  // namespace tandem
