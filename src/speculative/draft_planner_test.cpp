#include "speculative/draft_planner.h"

#include <gtest/gtest.h>

#include <vector>

namespace tandem {
namespace {

SpecOptions Options(SpecType type, bool adaptive) {
  SpecOptions spec;
  spec.type = type;
  spec.draft_max = 8;
  spec.adaptive = adaptive;
  spec.ngram_min = 2;
  return spec;
}

// A context whose suffix {1, 2} recurs: lookup proposes 3, 4, 1, 2, ...
const std::vector<int32_t> kLoop = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2};

DraftRequest Plan(DraftPlanner& planner, std::span<const int32_t> history, int cap) {
  DraftRequest r;
  planner.Fill(planner.Choose(history, cap), r);
  return r;
}

// Records the lookup round `r` as all rejected; the round then emitted 9 (not proposed).
void RejectLookupRound(DraftPlanner& planner, const DraftRequest& r,
                       std::vector<int32_t>& history) {
  DraftResult drafts;
  drafts.tokens.assign(r.lookup.begin(), r.lookup.end());
  drafts.n_lookup = static_cast<int>(r.lookup.size());
  planner.RecordRound(drafts, 0, history);
  history.push_back(9);
}

TEST(DraftPlanner, FixedLengthsTakeTheLookupThenTheModelToDraftMax) {
  DraftPlanner chain(Options(SpecType::kChain, false), 511, true);
  DraftRequest r = Plan(chain, kLoop, 16);
  EXPECT_EQ(r.n_max, 8);
  EXPECT_EQ(std::vector<int32_t>(r.lookup.begin(), r.lookup.end()),
            (std::vector<int32_t>{3, 4, 1, 2, 3, 4, 1, 2}));
  r = Plan(chain, kLoop, 3);  // the cap cuts both
  EXPECT_EQ(r.n_max, 3);
  EXPECT_EQ(r.lookup.size(), 3u);
  const std::vector<int32_t> fresh = {7, 8, 9};
  r = Plan(chain, fresh, 16);  // nothing recurs: the model alone
  EXPECT_EQ(r.n_max, 8);
  EXPECT_TRUE(r.lookup.empty());

  DraftPlanner ngram(Options(SpecType::kNgram, false), 511, false);
  EXPECT_EQ(Plan(ngram, fresh, 16).n_max, 0);  // no model: nothing to draft
  EXPECT_EQ(Plan(ngram, kLoop, 16).n_max, 8);
}

TEST(DraftPlanner, AdaptiveLookupGrowsWithAcceptanceAndGivesWayToTheModel) {
  DraftPlanner planner(Options(SpecType::kChain, true), 511, true);
  planner.UseStaticCosts(0.1);  // deterministic
  std::vector<int32_t> history = kLoop;
  // Every lookup draft accepted: the lookup part grows past --draft-max (8), as lookup drafts
  // cost no draft step.
  int longest = 0;
  for (int round = 0; round < 200; ++round) {
    DraftRequest r = Plan(planner, history, 64);
    const int k = static_cast<int>(r.lookup.size());
    longest = std::max(longest, k);
    DraftResult drafts;
    drafts.tokens.assign(r.lookup.begin(), r.lookup.end());
    drafts.n_lookup = k;
    drafts.tokens.resize(r.n_max, 0);  // the model's part, rejected
    planner.RecordRound(drafts, k, history);
  }
  EXPECT_GT(longest, 8);
  EXPECT_LE(longest, DraftPlanner::kLookupMax);

  // Lookup drafts now always rejected, the model's (alone) always accepted: the model drafts.
  DraftPlanner other(Options(SpecType::kChain, true), 511, true);
  other.UseStaticCosts(0.1);
  int model_alone = 0;
  for (int round = 0; round < 200; ++round) {
    DraftRequest r = Plan(other, kLoop, 16);
    DraftResult drafts;
    drafts.tokens.resize(r.n_max, 5);
    drafts.n_lookup = static_cast<int>(r.lookup.size());
    other.RecordRound(drafts, drafts.n_lookup > 0 ? 0 : r.n_max, kLoop);
    if (round >= 100 && drafts.n_lookup == 0 && r.n_max > 0) ++model_alone;
  }
  EXPECT_GT(model_alone, 90);
}

// Lookup drafts are accepted up to the 6th, a model extension of an accepted lookup part is,
// the model alone is not; returns the rounds (of 200) that extended the lookup part with the
// model, and the planner's probes.
std::pair<int, int64_t> ExtensionsWhenEverythingIsAccepted(double model_step_cost) {
  DraftPlanner planner(Options(SpecType::kChain, true), 511, true);
  planner.UseStaticCosts(model_step_cost);
  int extended = 0;
  for (int round = 0; round < 200; ++round) {
    DraftRequest r = Plan(planner, kLoop, 16);
    DraftResult drafts;
    drafts.tokens.assign(r.lookup.begin(), r.lookup.end());
    drafts.n_lookup = static_cast<int>(r.lookup.size());
    if (drafts.n_lookup > 0 && r.n_max > drafts.n_lookup) ++extended;
    drafts.tokens.resize(r.n_max, 5);
    const int k = drafts.n_lookup;
    planner.RecordRound(drafts, k == 0 ? 0 : (k > 6 ? 6 : r.n_max), kLoop);
  }
  return {extended, planner.probes()};
}

TEST(DraftPlanner, TheModelExtendsTheLookupOnlyWhenItsStepsPay) {
  // A model step at 2 % of a target forward: extending a fully accepted proposal pays.
  EXPECT_GT(ExtensionsWhenEverythingIsAccepted(0.02).first, 150);
  // A model step dearer than a target forward (a tiny target, a big assistant head): the
  // lookup part alone, the extension only probed now and then (and counted as probes).
  const auto [extended, probes] = ExtensionsWhenEverythingIsAccepted(1.5);
  EXPECT_LT(extended, 20);
  EXPECT_GT(probes, 0);
  EXPECT_GE(probes, extended);  // the model alone is probed too
}

TEST(DraftPlanner, AnUnusedProposalIsFollowedToItsEnd) {
  // The lookup is ruled out by its first round (all rejected), then the slot decodes plainly
  // while the text repeats exactly what lookup proposed: the followed proposals bring lookup's
  // estimated acceptance back, at every position, and lookup drafts again.
  DraftPlanner planner(Options(SpecType::kNgram, true), 511, false);
  planner.UseStaticCosts(0.0);
  std::vector<int32_t> history = kLoop;
  DraftRequest r = Plan(planner, history, 8);
  ASSERT_GT(r.lookup.size(), 0u);
  RejectLookupRound(planner, r, history);
  DraftResult drafts;
  int drafting = 0;
  for (int step = 0; step < 120; ++step) {
    r = Plan(planner, history, 8);
    // The text continues the loop 1, 2, 3, 4 whatever was drafted; all drafts are accepted.
    const int n = static_cast<int>(r.lookup.size());
    for (int i = 0; i <= n; ++i) history.push_back(history[history.size() - 4]);
    if (n == 0) {
      planner.RecordPlainStep(history);
    } else {
      ++drafting;
      drafts.tokens.assign(r.lookup.begin(), r.lookup.end());
      drafts.n_lookup = n;
      planner.RecordRound(drafts, n, history);
    }
  }
  EXPECT_GT(drafting, 60);
}

TEST(DraftPlanner, AFollowedProposalCountsBeforeItsLongEndArrives) {
  // Lookup proposes 64 tokens of a loop but is ruled out (its first round rejected, on a
  // compute-bound machine: each verified row costs 30 % of a plain step); the text then loops
  // exactly as proposed. The followed proposal must count as evidence well before all 64 of its
  // tokens have arrived, so lookup drafts again within a few plain steps (it took 64: the copy
  // workload decoded most of its repetition loop plainly).
  DraftPlanner planner(Options(SpecType::kNgram, true), 511, false);
  const auto verify_ms = [](int rows) { return 1.0 + 0.3 * (rows - 1); };
  planner.RecordVerifyTime(1, verify_ms(1));
  std::vector<int32_t> history = kLoop;
  DraftRequest r = Plan(planner, history, 64);
  ASSERT_GT(r.lookup.size(), 0u);
  planner.RecordVerifyTime(r.n_max + 1, verify_ms(r.n_max + 1));
  RejectLookupRound(planner, r, history);
  int plain = 0;
  for (; plain < 64; ++plain) {
    if (Plan(planner, history, 64).n_max > 0) break;
    planner.RecordVerifyTime(1, verify_ms(1));
    history.push_back(history[history.size() - 4]);
    planner.RecordPlainStep(history);
  }
  EXPECT_LE(plain, 16);
}

TEST(DraftPlanner, BadNgramLengthsAreRejected) {
  SpecOptions spec = Options(SpecType::kNgram, true);
  spec.ngram_min = 9;
  EXPECT_ANY_THROW(DraftPlanner(spec, 511, false));
}

}  // namespace
}  // namespace tandem
