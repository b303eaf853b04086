#include "speculative/speculation_stats.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(SpeculationStats, RoundsCountByPosition) {
  SpeculationStats s;
  s.RecordRound(3, 3);
  s.RecordRound(3, 1);
  s.RecordRound(1, 0);
  EXPECT_EQ(s.rounds, 3);
  EXPECT_EQ(s.drafted, 7);
  EXPECT_EQ(s.accepted, 4);
  EXPECT_EQ(s.AcceptanceByPosition(), (std::vector<double>{2.0 / 3, 1.0 / 2, 1.0 / 2}));
  EXPECT_DOUBLE_EQ(s.MeanAcceptedLength(), 4.0 / 3);
}

TEST(SpeculationStats, TokensPerForwardAndSpeedupEstimate) {
  SpeculationStats s;
  // 10 plain steps of 20 ms, then 10 rounds: 4 drafts at 1 ms each, verify 25 ms, 3 accepted.
  s.plain_steps = 10;
  s.plain_ms = 200;
  s.verify_ms = 200 + 250;
  s.draft_ms = 40;
  for (int i = 0; i < 10; ++i) s.RecordRound(4, 3);
  s.generated = 10 + 10 * 4;
  EXPECT_DOUBLE_EQ(s.TokensPerTargetForward(), 50.0 / 20);
  // 50 tokens x 20 ms of a plain step / (40 + 450) ms.
  EXPECT_DOUBLE_EQ(s.EstimatedSpeedup(), 50 * 20.0 / 490);
  EXPECT_FALSE(s.SpeedupIsUpperBound());

  SpeculationStats plain;
  plain.plain_steps = 5;
  plain.plain_ms = plain.verify_ms = 100;
  EXPECT_DOUBLE_EQ(plain.EstimatedSpeedup(), 1.0);
  // The same steps with a drafter that never drafted but planned every step: plain decoding
  // would not have paid the planning, so the estimate is below 1.
  SpeculationStats planned = plain;
  planned.plan_ms = 5;
  EXPECT_DOUBLE_EQ(planned.EstimatedSpeedup(), 100.0 / 105);
  EXPECT_DOUBLE_EQ(planned.ToJson()["plan_ms"], 5.0);

  SpeculationStats only_rounds;
  only_rounds.verify_ms = 100;
  only_rounds.RecordRound(2, 2);
  only_rounds.RecordRound(2, 0);
  EXPECT_TRUE(only_rounds.SpeedupIsUpperBound());
  EXPECT_DOUBLE_EQ(only_rounds.EstimatedSpeedup(), 4 * 50.0 / 100);
}

// One plain step is no baseline: the counts below (this test's inputs: one fast plain step,
// slower verification forwards, 1.86 tokens per forward) must not give an estimate below 1.
// Below the minimum the verification forwards stand in, flagged as an upper bound; at the
// minimum the plain steps do.
TEST(SpeculationStats, TooFewPlainStepsAreNoBaseline) {
  SpeculationStats s;
  for (int i = 0; i < 100; ++i) s.RecordRound(4, i % 100 < 86 ? 1 : 0);
  s.verify_ms = 100 * 12.0;
  s.draft_ms = 100 * 1.0;
  s.plain_steps = 1;
  s.plain_ms = 2;
  s.verify_ms += 2;
  EXPECT_TRUE(s.SpeedupIsUpperBound());
  // (100 rounds + 86 accepted + 1 plain) tokens x 12 ms / (1202 + 100) ms.
  EXPECT_DOUBLE_EQ(s.EstimatedSpeedup(), 187 * 12.0 / 1302);
  EXPECT_GT(s.EstimatedSpeedup(), 1.0);
  EXPECT_TRUE(s.ToJson()["speedup_estimate_is_upper_bound"].get<bool>());

  s.plain_steps = SpeculationStats::kMinBaselinePlainSteps;
  s.plain_ms = 8 * 10.0;
  s.verify_ms = 100 * 12.0 + 80;
  EXPECT_FALSE(s.SpeedupIsUpperBound());
  EXPECT_DOUBLE_EQ(s.EstimatedSpeedup(), (100 + 86 + 8) * 10.0 / (1280 + 100));
}

TEST(SpeculationStats, AddMergesEverything) {
  SpeculationStats a, b;
  a.RecordRound(2, 1);
  b.RecordRound(4, 4);
  b.plain_ms = 3;
  b.plan_ms = 2;
  b.probes = 2;
  a.probes = 1;
  a.Add(b);
  EXPECT_EQ(a.probes, 3);
  EXPECT_EQ(a.ToJson()["probes"], 3);
  EXPECT_DOUBLE_EQ(a.plan_ms, 2.0);
  EXPECT_EQ(a.rounds, 2);
  EXPECT_EQ(a.drafted_at.size(), 4u);
  EXPECT_EQ(a.accepted_at[0], 2);
  EXPECT_EQ(a.plain_ms, 3);
  EXPECT_TRUE(a.ToJson().contains("speedup_estimate"));
}

TEST(SpeculationStats, RepetitionLoops) {
  EXPECT_TRUE(InRepetitionLoop({1, 2, 3, 1, 2, 3, 1, 2, 3}));
  EXPECT_TRUE(InRepetitionLoop({5, 7, 7, 7}));
  EXPECT_FALSE(InRepetitionLoop({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_FALSE(InRepetitionLoop({1, 2, 1, 2}));  // two repeats are not a loop
}

TEST(SpeculationStats, LongPeriodLoopsCount) {
  // `make run`'s output: a unique opening, then one block of four lines (46 tokens) repeated.
  std::vector<int32_t> text;
  for (int i = 0; i < 30; ++i) text.push_back(1000 + i);
  std::vector<int32_t> block;
  for (int i = 0; i < 46; ++i) block.push_back(i % 9 == 8 ? 10 : 100 + (i * 37) % 83);  // 10 = \n
  int flagged_first = 0, flagged_repeats = 0, repeats = 0;
  for (int copy = 0; copy < 3; ++copy) {
    for (int32_t token : block) {
      text.push_back(token);
      const bool loop = InRepetitionLoop(text);
      if (copy == 0) {
        flagged_first += loop;
      } else {
        flagged_repeats += loop;
        ++repeats;
      }
    }
  }
  EXPECT_EQ(flagged_first, 0);
  // From 23 tokens (half the block) into the second copy, every token is flagged.
  EXPECT_EQ(flagged_repeats, repeats - 22);
  // The old limit (periods up to 32) misses it entirely.
  EXPECT_FALSE(InRepetitionLoop(text, 32));
  // A common phrase recurring inside otherwise new text is not a loop.
  std::vector<int32_t> prose;
  for (int i = 0; i < 200; ++i) {
    prose.push_back(i % 50 == 0 ? 7 : 2000 + i);
    EXPECT_FALSE(InRepetitionLoop(prose)) << i;
  }
}

TEST(SpeculationStats, AcceptanceBySource) {
  SpeculationStats s;
  s.RecordRound(5, 4, 3);  // lookup 3/3, then the model 1 of 2
  s.RecordRound(4, 1, 2);  // lookup 1 of 2: the model's 2 never reached, not counted
  s.RecordRound(2, 2);     // the model alone
  EXPECT_EQ(s.drafted, 11);
  EXPECT_EQ(s.ngram.drafted, 5);
  EXPECT_EQ(s.ngram.accepted, 4);
  EXPECT_EQ(s.ngram.AcceptanceByPosition(), (std::vector<double>{1.0, 0.5, 1.0}));
  EXPECT_EQ(s.model.drafted, 4);
  EXPECT_EQ(s.model.accepted, 3);
  EXPECT_EQ(s.model.AcceptanceByPosition(), (std::vector<double>{1.0, 0.5}));
  SpeculationStats sum;
  sum.Add(s);
  sum.Add(s);
  EXPECT_EQ(sum.ngram.accepted, 8);
  EXPECT_EQ(sum.ToJson()["by_source"]["model"]["drafted"], 8);
}

TEST(SpeculationStats, SuffixDraftsAreTheirOwnSource) {
  SpeculationStats s;
  s.RecordRound(5, 4, 3, true);  // suffix 3/3, then the model 1 of 2
  s.RecordRound(3, 1, 3);        // lookup 1 of 3
  s.RecordRound(2, 0, 2, true);  // suffix 0 of 2
  EXPECT_EQ(s.suffix.drafted, 5);
  EXPECT_EQ(s.suffix.accepted, 3);
  EXPECT_EQ(s.suffix.AcceptanceByPosition(), (std::vector<double>{0.5, 0.5, 1.0}));
  EXPECT_EQ(s.ngram.drafted, 3);
  EXPECT_EQ(s.ngram.accepted, 1);
  EXPECT_EQ(s.model.drafted, 2);
  EXPECT_EQ(s.model.accepted, 1);
  SpeculationStats sum;
  sum.Add(s);
  sum.Add(s);
  const nlohmann::json j = sum.ToJson();
  EXPECT_EQ(j["by_source"]["suffix"]["drafted"], 10);
  EXPECT_EQ(j["by_source"]["suffix"]["accepted"], 6);
  EXPECT_EQ(j["by_source"]["ngram"]["drafted"], 6);
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

// Forced drafts come after the drafters' part: counted in `forced` always, in `grammar` only
// when verification reached them, and never in drafted/accepted.
TEST(SpeculationStats, ForcedDraftsAreTheirOwnSource) {
  SpeculationStats s;
  s.RecordForced({false, false, false}, 2, 4);  // both drafter drafts and 2 of 3 forced accepted
  s.RecordForced({false, false}, 2, 1);  // a drafter draft rejected: the forced part untested
  s.RecordForced({}, 1, 1);              // nothing forced
  EXPECT_EQ(s.forced, 5);
  EXPECT_EQ(s.forced_accepted, 2);
  EXPECT_EQ(s.guessed, 0);
  EXPECT_EQ(s.grammar.drafted, 3);
  EXPECT_EQ(s.grammar.accepted, 2);
  EXPECT_EQ(s.grammar.AcceptanceByPosition(), (std::vector<double>{1.0, 1.0, 0.0}));
  EXPECT_EQ(s.drafted, 0);
  const nlohmann::json j = s.ToJson();
  EXPECT_EQ(j["by_source"]["grammar"]["drafted"], 3);
  // Of the forced drafts verification reached, 2 of 3 were accepted (not 2 of 5).
  EXPECT_DOUBLE_EQ(j["forced_acceptance_rate"].get<double>(), 2.0 / 3.0);
  SpeculationStats sum;
  sum.Add(s);
  EXPECT_EQ(sum.grammar.accepted, 2);
}

// Layout guesses share the grammar's tail with forced tokens: counted apart, by their place.
TEST(SpeculationStats, LayoutGuessesAreCountedApartFromForcedDrafts) {
  SpeculationStats s;
  // One drafter draft, then guess, forced, guess, forced; drafter + guess + forced accepted.
  const SpeculationStats::GuessOutcome outcome = s.RecordForced({true, false, true, false}, 1, 3);
  EXPECT_EQ(outcome.reached, 2);  // the second guess is the first draft rejected
  EXPECT_EQ(outcome.accepted, 1);
  EXPECT_EQ(s.guessed, 2);
  EXPECT_EQ(s.guessed_accepted, 1);
  EXPECT_EQ(s.forced, 2);
  EXPECT_EQ(s.forced_accepted, 1);
  EXPECT_EQ(s.grammar.drafted, 4);
  EXPECT_EQ(s.grammar.accepted, 2);
  const nlohmann::json j = s.ToJson();
  EXPECT_EQ(j["guessed"], 2);
  EXPECT_EQ(j["guessed_accepted"], 1);
  SpeculationStats sum;
  sum.Add(s);
  sum.Add(s);
  EXPECT_EQ(sum.guessed_accepted, 2);
  // A rejected drafter draft: verification never reached the guesses.
  SpeculationStats t;
  const SpeculationStats::GuessOutcome unreached = t.RecordForced({true, false}, 2, 1);
  EXPECT_EQ(unreached.reached, 0);
  EXPECT_EQ(unreached.accepted, 0);
  EXPECT_EQ(t.guessed, 1);
}

}  // namespace
}  // namespace tandem
