// A slot's plan for each speculative round: which sources draft (none, a free proposal, the model
// drafter, or a free proposal then the model: chained) and how many tokens each, from the
// acceptance measured per source and position and the measured draft and verify costs. Free
// proposals (no drafter step, only their verify rows cost) come from two sources:
//   - prompt lookup: the slot's own index (NgramIndex over prompt and generated tokens,
//     O(ngram_max) per token);
//   - suffix drafting: earlier requests' text, asked of the drafter (Drafter::ProposeFromPast,
//     the SuffixIndex behind SuffixDrafter) for the request's tenant.
// It keeps a DraftLengthController per free source and two for the model:
//   - lookup, suffix: free drafts of each source (drafting is free, verify rows cost);
//   - model:  the model drafter alone, in rounds where no source proposes or they lose;
//   - tail:   the model extending a free proposal (a different acceptance: docs/mtp.md
//             § Chained drafting), observed only when the whole proposal was accepted.
// When both free sources propose, the one whose controller promises more tokens per unit time
// drafts (ties: prompt lookup); the other's proposal is followed as the tokens arrive, so it
// keeps its evidence. The chosen proposal's length is its controller's choice and the model
// extension's the one that maximises the round's expected tokens per unit time (ChainRate:
// the proposal's acceptance, the tail's acceptance given a fully accepted proposal, the measured
// model step and verify-row costs), none when a model step costs more than it buys (then it is
// probed now and then out of a ProbeBudget). The chained plan runs if its rate beats the model's
// alone; otherwise the model drafts alone. Each controller still compares against plain
// decoding (and probes), so zero acceptance falls back to plain steps.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "speculative/draft_length_controller.h"
#include "speculative/drafter.h"
#include "speculative/ngram_index.h"
#include "speculative/probe_budget.h"
#include "speculative/spec_options.h"

namespace tandem {

// Where a planner's suffix drafting proposals come from: `drafter` (Drafter::ProposeFromPast)
// for `tenant`'s text.
struct PastTextSource {
  Drafter* drafter = nullptr;
  std::string tenant;
};

class DraftPlanner {
 public:
  // Longest free proposal (prompt lookup or suffix) of an adaptive round (--draft-max caps the
  // model's part): the most tokens a round drafts from one source.
  static constexpr int kLookupMax = kMaxDraftTokens;
  // An unused free proposal is followed for at most this many tokens (CheckUnusedProposal).
  static constexpr size_t kFollowMax = 8;

  // The free sources, in the order a tie between them is settled.
  enum Source { kLookup = 0, kSuffix = 1 };
  static constexpr int kSources = 2;

  DraftPlanner() = default;
  // `spec`: the request's options; `limit`: most drafts a round can hold (the batch);
  // `model`: a model drafter serves the request (mtp, draft, chain). Lookup runs for
  // UsesNgram(spec.type) and spec.ngram; suffix drafting for UsesSuffix(spec.type), spec.suffix
  // and a `past.drafter`. Throws Error(kInvalidArgument) on bad n-gram lengths.
  DraftPlanner(const SpecOptions& spec, int limit, bool model, PastTextSource past = {});

  // Sampled requests: a model draft step costs `model_step_cost` target forwards, verification
  // the fixed model of DraftLengthController::UseStaticCosts; the plan then depends only on the
  // seed and the text.
  void UseStaticCosts(double model_step_cost);

  // Starts from `earlier`'s estimates (DraftLengthController::ContinueFrom for each of its
  // controllers, the model extensions' probe spacing) when both plan alike: the slot's previous
  // request with the same options. No text is carried: the lookup index and proposals start
  // empty.
  // Returns whether it did (false when the two plan with other options, which it then ignores).
  bool ContinueFrom(const DraftPlanner& earlier);

  // The share of each round's time its controllers bank for probes (ProbeBudget::SetShare):
  // a slot in a batch of n generating slots banks ProbeBudget::kShare / n, since its probe's
  // draft step and verify row hold up all n.
  void SetProbeShare(double share);

  int MaxDrafts() const { return std::max(lookup_max_, model_max_); }
  // Brings the lookup index up to `history` (the slot's committed tokens), asks suffix drafting
  // for its proposal, and plans this round: returns the drafts to reserve, in [0, cap].
  int Choose(std::span<const int32_t> history, int cap);
  // The draft request's plan for n <= Choose()'s drafts: the chosen free proposal's tokens first
  // (DraftRequest::lookup; they point into this planner until the next Choose), then the model
  // up to n in total.
  void Fill(int n, DraftRequest& request) const;
  // Whether this round's drafts are the model's alone (no free proposal): a tree may grow then.
  bool ModelAlone() const { return model_on_ && plan_lookup_ == 0; }
  // The tree plan of a round whose trunk is the model's n drafts (docs/mtp.md § Draft trees):
  // the trunk's reach from the model's acceptance by position, each of up to `max_extra`
  // branch rows priced by the model's verify-cost curve at the round's rate.
  TreePlan MakeTreePlan(int n, int width, int max_extra, double calibration) const;
  // The source of this round's free drafts (Fill's DraftRequest::lookup).
  Source planned_source() const { return plan_source_; }
  // Whether suffix drafting serves the request (its text is then learned when it ends).
  bool suffix_on() const { return sources_[kSuffix].on; }

  void RecordDraftTime(int steps, double ms);
  void RecordVerifyTime(int rows, double ms);
  // DraftLengthController::RowCostShare of the verify times recorded (static under
  // UseStaticCosts).
  double RowCostShare(int rows) const {
    return model_on_ ? model_.RowCostShare(rows) : sources_[kLookup].ctrl.RowCostShare(rows);
  }
  // After a round that drafted `drafts` (n_lookup of them first, from planned_source()) and
  // accepted `accepted`;
  // `history`: the committed tokens after it (what the round emitted follows Choose's history).
  void RecordRound(const DraftResult& drafts, int accepted, std::span<const int32_t> history) {
    RecordRound(drafts.n_lookup, static_cast<int>(drafts.tokens.size()), accepted, history);
  }
  // The same, for a round whose first `n_drafted` drafts (of which `n_lookup` are free ones)
  // came from the drafter; later ones (grammar-forced) are not the planner's.
  void RecordRound(int n_lookup, int n_drafted, int accepted, std::span<const int32_t> history);

  // After a plain step (no drafts): `history` as for RecordRound. An unused free proposal is
  // followed until it resolves, and recorded as its source's evidence.
  void RecordPlainStep(std::span<const int32_t> history) {
    for (FreeSource& s : sources_) CheckUnusedProposal(s, history);
  }

  // Rounds drafted only to look for acceptance (every controller's, and model extensions
  // probed), and plain steps taken to re-time them (SpeculationStats::probes, remeasures).
  int64_t probes() const;
  int64_t remeasures() const;

 private:
  // One source of free drafts: its controller, this round's proposal, and an unused proposal
  // followed as the tokens arrive.
  struct FreeSource {
    bool on = false;
    DraftLengthController ctrl{0, false};
    std::vector<int32_t> proposal;  // this round's
    int match = 0;                  // ... the context suffix it followed
    std::vector<int32_t> shadow;    // an unused proposal followed as tokens arrive
    size_t shadow_at = 0;           // ... from this history length
  };

  // Estimated tokens per ms of a chained round (the source's n tokens, tail t) and of the model
  // alone (n).
  double ChainRate(const FreeSource& s, int n, int t) const;
  double ModelRate(int n) const;
  // The model extension of `s`'s part of n tokens: at most `room` tokens.
  int ChooseTail(const FreeSource& s, int n, int room);
  void CheckUnusedProposal(FreeSource& s, std::span<const int32_t> history);

  bool model_on_ = false, adaptive_ = true;
  int lookup_max_ = 0, model_max_ = 0;
  std::optional<NgramIndex> index_;
  PastTextSource past_;
  FreeSource sources_[kSources];
  Source plan_source_ = kLookup;  // this round's free drafts come from here
  int plan_lookup_ = 0;           // ... of which the plan takes this many
  size_t committed_ = 0;          // history length at Choose
  bool model_drafted_ = false;    // the model drafted this round (RecordDraftTime)
  DraftLengthController model_{0, false}, tail_{0, false};
  ProbeBudget tail_probe_;  // model extensions tried while they do not pay
  int tail_longest_ = 0;    // the longest extension whose fate was seen
};

}  // namespace tandem
