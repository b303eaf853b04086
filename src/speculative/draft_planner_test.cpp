#include "speculative/draft_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "speculative/suffix_drafter.h"

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

// A machine's costs for the copy workload below: a plain step, verifying `rows` rows (after a
// round in which the assistant drafted, if `after_model`), one assistant step.
struct CopyCosts {
  double plain_ms;
  double (*verify_ratio)(int rows, bool after_model);  // of a plain step
  double step_ms;
};

// Zen 3 AVX2 under load: verifying T > 1 rows 4.1x a 1.4 ms plain step, rising to 7.5x at 17 and
// continuing (a 2-thread forward waiting for the busy vCPU); an assistant step 0.55 ms.
const CopyCosts kLoadedZen3 = {1.4,
                               [](int rows, bool) {
                                 return rows == 1   ? 1.0
                                        : rows <= 3 ? 4.1
                                        : rows <= 5 ? 4.1 + 0.35 * (rows - 3)
                                                    : 4.8 + (7.5 - 4.8) * (rows - 5) / 12.0;
                               },
                               0.55};
// Idle Zen 3 (session 10's traces): a 0.29 ms plain step, a verified row 0.45 of one, and a
// verify right after the assistant's steps 0.16 ms dearer (verify(2) 0.58 ms against 0.42 after
// a lookup round: the assistant's step evicted the target's working set); a step 0.5 ms.
const CopyCosts kIdleZen3 = {
    0.29,
    [](int rows, bool after_model) {
      return rows == 1 ? 1.0 : 1.0 + 0.45 * (rows - 1) + (after_model ? 0.55 : 0.0);
    },
    0.5};

// The copy workload on the bundled pair: the text is 100 tokens of its own (8 distinct tokens in
// a hashed order, so short suffixes recur by chance and lookup proposes continuations that
// mostly fail, as on the pair's real text), then a 3-token loop that prompt lookup predicts
// exactly; the model's drafts are right half the time. Returns the simulated ms to generate 256
// tokens with `type`, and counts the rounds in which the model drafted.
double CopyWorkloadMs(SpecType type, int* model_rounds, const CopyCosts& costs = kLoadedZen3) {
  const auto verify_ms = [&](int rows, bool after_model) {
    return costs.plain_ms * costs.verify_ratio(rows, after_model);
  };
  const auto truth = [](size_t i) {
    return i < 100 ? int32_t(1000 + (i * 2654435761u >> 7) % 8) : int32_t(7 + i % 3);
  };
  DraftPlanner planner(Options(type, true), 511, type != SpecType::kNgram);
  std::vector<int32_t> history = {1, 2, 3};  // the prompt
  uint64_t coin = 12345;                     // the model's drafts: right every other time
  double ms = 0;
  *model_rounds = 0;
  size_t generated = 0;
  while (generated < 256) {
    const int cap = static_cast<int>(std::min<size_t>(64, 255 - generated));
    DraftRequest r = Plan(planner, history, cap);
    DraftResult drafts;
    drafts.tokens.assign(r.lookup.begin(), r.lookup.end());
    drafts.n_lookup = static_cast<int>(r.lookup.size());
    const int steps = r.n_max - drafts.n_lookup;
    for (int i = 0; i < steps; ++i) {
      coin = coin * 6364136223846793005ULL + 1442695040888963407ULL;
      const size_t at = generated + drafts.tokens.size();
      drafts.tokens.push_back((coin >> 40) % 2 == 0 ? truth(at) : -1);
    }
    if (steps > 0) {
      ++*model_rounds;
      planner.RecordDraftTime(steps, costs.step_ms * steps);
      ms += costs.step_ms * steps;
    }
    const int k = static_cast<int>(drafts.tokens.size());
    const double verify = verify_ms(k + 1, steps > 0);
    ms += verify;
    planner.RecordVerifyTime(k + 1, verify);
    int accepted = 0;
    while (accepted < k && drafts.tokens[accepted] == truth(generated + accepted)) ++accepted;
    for (int i = 0; i <= accepted; ++i) history.push_back(truth(generated++));
    if (k == 0) {
      planner.RecordPlainStep(history);
    } else {
      planner.RecordRound(drafts, accepted, history);
    }
  }
  return ms;
}

TEST(DraftPlanner, ChainKeepsUpWithLookupAloneWhenTheModelDoesNotPay) {
  // Chain fell behind lookup alone here: where lookup proposed nothing the model drafted, each
  // new length's first verify time was taken for a stall and every time was forgotten after 64
  // rounds, so it kept retrying (model rounds that cost several plain steps for ~2 tokens). Now
  // it stops after its first rounds and probes only out of the budget, and chain stays within
  // 3 % of lookup alone.
  int model_rounds = 0, none = 0;
  const double ngram = CopyWorkloadMs(SpecType::kNgram, &none);
  const double chain = CopyWorkloadMs(SpecType::kChain, &model_rounds);
  const double mtp = CopyWorkloadMs(SpecType::kMtp, &none);
  std::printf("copy, loaded Zen 3: ngram %.1f ms, chain %.1f ms (%d model rounds), mtp %.1f ms\n",
              ngram, chain, model_rounds, mtp);
  EXPECT_GE(ngram / chain, 0.97);
  EXPECT_LE(model_rounds, 3);
  EXPECT_LT(chain, 0.8 * mtp);  // and lookup's gain is kept
}

TEST(DraftPlanner, ChainKeepsUpWithLookupAloneOnAnIdleMachine) {
  // The same workload at idle costs, where a verify right after the assistant's steps costs more
  // than after a lookup round. Chain gave 0.76x lookup alone: the model's first round left
  // lookup's controller a verify(2) of 2x a plain step (its own rounds: 1.45x), which ruled its
  // short drafts out for 64 rounds, and a length rejected once where the text changed stayed
  // out while the proposals went on matching. With borrowed verify times dropped once lookup has
  // its own, and the round's next token counted as evidence for the proposal's next position:
  // 0.94x (0.88x with the first alone, 0.77x with the second alone). The 3 % is not met
  // here: what remains is where each drafter's rounds happen to fall on the text.
  int model_rounds = 0, none = 0;
  const double ngram = CopyWorkloadMs(SpecType::kNgram, &none, kIdleZen3);
  const double chain = CopyWorkloadMs(SpecType::kChain, &model_rounds, kIdleZen3);
  const double mtp = CopyWorkloadMs(SpecType::kMtp, &none, kIdleZen3);
  std::printf("copy, idle Zen 3: ngram %.1f ms, chain %.1f ms (%d model rounds), mtp %.1f ms\n",
              ngram, chain, model_rounds, mtp);
  EXPECT_GE(ngram / chain, 0.93);
  EXPECT_LT(chain, 0.8 * mtp);
}

// Suffix drafting beside prompt lookup: a SuffixDrafter (no model) whose index holds `earlier`
// for tenant "k".
struct PastFixture {
  SuffixDrafter drafter{std::make_shared<SuffixIndex>(size_t{1} << 20), nullptr};
  explicit PastFixture(const std::vector<int32_t>& earlier) { drafter.LearnRequest("k", earlier); }
  PastTextSource Source(std::string tenant = "k") { return {&drafter, std::move(tenant)}; }
};

// An earlier request wrote 20..31 then 40..47; the context ends with 24..31 after a start of its
// own, and holds the loop 1, 2, 3, 4 (lookup's proposal) before that.
const std::vector<int32_t> kEarlier = {20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                       30, 31, 40, 41, 42, 43, 44, 45, 46, 47};
const std::vector<int32_t> kContext = {1, 2, 3, 1, 2, 3, 9, 24, 25, 26, 27, 28, 29, 30, 31};

TEST(DraftPlanner, SuffixDraftingProposesEarlierRequestsText) {
  PastFixture past(kEarlier);
  DraftPlanner suffix(Options(SpecType::kSuffix, false), 511, false, past.Source());
  EXPECT_TRUE(suffix.suffix_on());
  DraftRequest r = Plan(suffix, kContext, 16);
  EXPECT_EQ(suffix.planned_source(), DraftPlanner::kSuffix);
  EXPECT_EQ(std::vector<int32_t>(r.lookup.begin(), r.lookup.end()),
            (std::vector<int32_t>{40, 41, 42, 43, 44, 45, 46, 47}));
  EXPECT_EQ(r.n_max, 8);
  // Another tenant's planner finds nothing; a request that turned suffix off asks nothing.
  DraftPlanner other(Options(SpecType::kSuffix, false), 511, false, past.Source("j"));
  EXPECT_EQ(Plan(other, kContext, 16).n_max, 0);
  SpecOptions off = Options(SpecType::kSuffix, false);
  off.suffix = false;
  DraftPlanner none(off, 511, false, past.Source());
  EXPECT_FALSE(none.suffix_on());
  EXPECT_EQ(Plan(none, kContext, 16).n_max, 0);
  // Suffix-chain with lookup turned off (SpecOptions::ngram): suffix, then the model.
  SpecOptions no_lookup = Options(SpecType::kSuffixChain, false);
  no_lookup.ngram = false;
  DraftPlanner chain(no_lookup, 511, true, past.Source());
  r = Plan(chain, std::vector<int32_t>{1, 2, 3, 1, 2, 3}, 16);  // lookup would propose; it is off
  EXPECT_TRUE(r.lookup.empty());
  EXPECT_EQ(r.n_max, 8);
}

TEST(DraftPlanner, FixedLengthsTakeTheLongerMatchOfLookupAndSuffix) {
  PastFixture past(kEarlier);
  DraftPlanner planner(Options(SpecType::kSuffixChain, false), 511, true, past.Source());
  // The suffix index matches 8 tokens (24..31); lookup nothing (31 does not recur here).
  DraftRequest r = Plan(planner, kContext, 16);
  EXPECT_EQ(planner.planned_source(), DraftPlanner::kSuffix);
  EXPECT_EQ(r.lookup.size(), 8u);
  // The context's loop matches 6 tokens for lookup, the index 4 (its text 2, 3, 1, 2, 7):
  // lookup's proposal.
  PastFixture loop({9, 2, 3, 1, 2, 7, 7, 7});
  DraftPlanner both(Options(SpecType::kSuffixChain, false), 511, true, loop.Source());
  r = Plan(both, std::vector<int32_t>{3, 1, 2, 3, 1, 2, 3, 1, 2}, 16);
  EXPECT_EQ(both.planned_source(), DraftPlanner::kLookup);
  EXPECT_EQ(r.lookup[0], 3);
  // Equal matches (4 tokens each): lookup, the request's own text, wins the tie.
  PastFixture tie({7, 1, 2, 3, 4, 8});
  DraftPlanner tied(Options(SpecType::kSuffixChain, false), 511, true, tie.Source());
  r = Plan(tied, std::vector<int32_t>{9, 1, 2, 3, 4, 1, 2, 3, 4}, 16);
  EXPECT_EQ(tied.planned_source(), DraftPlanner::kLookup);
  EXPECT_EQ(r.lookup[0], 1);
}

TEST(DraftPlanner, AdaptivePlansGiveTheRoundToTheSourceThatIsAccepted) {
  // Both sources propose every round; one's drafts are always rejected, the other's always
  // accepted. Whichever it is, the accepted one ends up drafting nearly every round.
  for (const DraftPlanner::Source good : {DraftPlanner::kLookup, DraftPlanner::kSuffix}) {
    // The index proposes 40.. after 1, 2, 3, 4; lookup proposes the loop.
    PastFixture past({1, 2, 3, 4, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50});
    DraftPlanner planner(Options(SpecType::kSuffixChain, true), 511, false, past.Source());
    planner.UseStaticCosts(0.0);
    const std::vector<int32_t> history = {1, 2, 3, 4, 1, 2, 3, 4};
    int good_rounds = 0;
    for (int round = 0; round < 200; ++round) {
      DraftRequest r = Plan(planner, history, 16);
      const int n = static_cast<int>(r.lookup.size());
      DraftResult drafts;
      drafts.tokens.assign(r.lookup.begin(), r.lookup.end());
      drafts.n_lookup = n;
      const bool accepted = planner.planned_source() == good;
      if (n > 0 && accepted && round >= 100) ++good_rounds;
      if (n == 0) {
        planner.RecordPlainStep(history);
      } else {
        planner.RecordRound(drafts, accepted ? n : 0, history);
      }
    }
    EXPECT_GT(good_rounds, 90) << (good == DraftPlanner::kLookup ? "lookup" : "suffix");
  }
}

TEST(DraftPlanner, BadNgramLengthsAreRejected) {
  SpecOptions spec = Options(SpecType::kNgram, true);
  spec.ngram_min = 9;
  EXPECT_ANY_THROW(DraftPlanner(spec, 511, false));
}

}  // namespace
}  // namespace tandem
