// A slot's plan for each speculative round: which sources draft (none, prompt lookup, the model
// drafter, or lookup then model: chained) and how many tokens each, from the acceptance measured
// per source and position and the measured draft and verify costs. It keeps the slot's
// prompt-lookup index (NgramIndex over prompt and generated tokens, O(ngram_max) per token) and
// three DraftLengthControllers:
//   - lookup: lookup tokens, whose drafting is free (only their verify rows cost);
//   - model:  the model drafter alone, in rounds where lookup proposes nothing or loses;
//   - tail:   the model extending a lookup proposal (a different acceptance: docs/mtp.md
//             § Chained drafting), observed only when the whole proposal was accepted.
// When the context recurs, the lookup part's length is the lookup controller's choice and the
// model extension's the one that maximises the round's expected tokens per unit time (ChainRate:
// lookup acceptance, the tail's acceptance given a fully accepted lookup part, the measured
// model step and verify-row costs), none when a model step costs more than it buys (then it is
// probed now and then out of a ProbeBudget). The chained plan runs if its rate beats the model's
// alone; otherwise the model drafts alone. Each controller still compares against plain
// decoding (and probes), so zero acceptance falls back to plain steps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "speculative/draft_length_controller.h"
#include "speculative/drafter.h"
#include "speculative/ngram_index.h"
#include "speculative/probe_budget.h"
#include "speculative/spec_options.h"

namespace tandem {

class DraftPlanner {
 public:
  // Longest lookup proposal of an adaptive round (--draft-max caps the model's part): the most
  // tokens a round drafts from one source.
  static constexpr int kLookupMax = kMaxDraftTokens;
  // An unused lookup proposal is followed for at most this many tokens (CheckUnusedProposal).
  static constexpr size_t kFollowMax = 8;

  DraftPlanner() = default;
  // `spec`: the request's options; `limit`: most drafts a round can hold (the batch);
  // `model`: a model drafter serves the request (mtp, draft, chain). Lookup runs for
  // UsesNgram(spec.type). Throws Error(kInvalidArgument) on bad n-gram lengths.
  DraftPlanner(const SpecOptions& spec, int limit, bool model);

  // Sampled requests: a model draft step costs `model_step_cost` target forwards, verification
  // the fixed model of DraftLengthController::UseStaticCosts; the plan then depends only on the
  // seed and the text.
  void UseStaticCosts(double model_step_cost);

  int MaxDrafts() const { return std::max(lookup_max_, model_max_); }
  // Brings the lookup index up to `history` (the slot's committed tokens) and plans this round:
  // returns the drafts to reserve, in [0, cap].
  int Choose(std::span<const int32_t> history, int cap);
  // The draft request's plan for n <= Choose()'s drafts: lookup tokens first (they point into
  // this planner until the next Choose), then the model up to n in total.
  void Fill(int n, DraftRequest& request) const;

  void RecordDraftTime(int steps, double ms);
  void RecordVerifyTime(int rows, double ms);
  // DraftLengthController::RowCostShare of the verify times recorded (static under
  // UseStaticCosts).
  double RowCostShare(int rows) const { return (model_on_ ? model_ : lookup_).RowCostShare(rows); }
  // After a round that drafted `drafts` (n_lookup of them first) and accepted `accepted`;
  // `history`: the committed tokens after it (what the round emitted follows Choose's history).
  void RecordRound(const DraftResult& drafts, int accepted, std::span<const int32_t> history) {
    RecordRound(drafts.n_lookup, static_cast<int>(drafts.tokens.size()), accepted, history);
  }
  // The same, for a round whose first `n_drafted` drafts (of which `n_lookup` are lookup
  // tokens) came from the drafter; later ones (grammar-forced) are not the planner's.
  void RecordRound(int n_lookup, int n_drafted, int accepted, std::span<const int32_t> history);

  // After a plain step (no drafts): `history` as for RecordRound. An unused lookup proposal is
  // followed until it resolves, and recorded as lookup evidence.
  void RecordPlainStep(std::span<const int32_t> history) { CheckUnusedProposal(history); }

  // Rounds drafted only to look for acceptance (every controller's, and model extensions
  // probed), and plain steps taken to re-time them (SpeculationStats::probes, remeasures).
  int64_t probes() const;
  int64_t remeasures() const;

 private:
  // Estimated tokens per ms of a chained round (lookup n, tail t) and of the model alone (n).
  double ChainRate(int n, int t) const;
  double ModelRate(int n) const;
  // The model extension of a lookup part of n tokens: at most `room` tokens.
  int ChooseTail(int n, int room);
  void CheckUnusedProposal(std::span<const int32_t> history);

  bool lookup_on_ = false, model_on_ = false, adaptive_ = true;
  int lookup_max_ = 0, model_max_ = 0;
  std::optional<NgramIndex> index_;
  std::vector<int32_t> proposal_;  // this round's lookup proposal
  int plan_lookup_ = 0;            // ... of which the plan takes this many
  size_t committed_ = 0;           // history length at Choose
  bool model_drafted_ = false;     // the model drafted this round (RecordDraftTime)
  std::vector<int32_t> shadow_;    // an unused proposal followed as tokens arrive
  size_t shadow_at_ = 0;           // ... from this history length
  DraftLengthController lookup_{0, false}, model_{0, false}, tail_{0, false};
  ProbeBudget tail_probe_;  // model extensions tried while they do not pay
  int tail_longest_ = 0;    // the longest extension whose fate was seen
};

}  // namespace tandem
