// One request's speculation, round by round: the drafter it drafts with, the planner that chooses
// each round's draft length, the grammar's forced drafts and layout guesses, this round's drafts,
// and the rules that verify them against the target's rows (greedy: the target's argmax; sampled:
// accept with probability min(1, p/q), else resample from the residual). The engine slot owns one
// per request and drives it each step: PlanRound, the drafter's drafts (SetDrafts), AddRows into
// the step's batch, then OnRows with the forward's output. The engine schedules slots and batches;
// what a round drafts and what it accepts is decided here.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/forward_batch.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "speculative/draft_planner.h"
#include "speculative/drafter.h"
#include "speculative/forced_run_policy.h"
#include "speculative/grammar_constraint.h"
#include "speculative/slot_grammar.h"
#include "speculative/spec_options.h"
#include "speculative/speculation_stats.h"

namespace tandem {

// What of a request its speculation depends on.
struct RoundParams {
  SpecOptions spec;         // type kNone: no drafter (a grammar may still force drafts)
  SamplingParams sampling;  // greedy or not; a token banned by a -inf logit bias
  // Benchmarks only: drafts are accepted at these rates (by position) instead of verified.
  std::vector<float> synthetic_acceptance;
  bool wants_logprobs = false;           // the request reads the unmasked rows (top_logprobs >= 0)
  bool limit_constrained_logits = true;  // rows may compute logits for the allowed tokens only
  std::string tenant;                    // suffix drafting's tenant
};

// Where the request stands when a round drafts: pointers into the slot, valid for the round.
struct CommittedState {
  int32_t last = 0;                               // the last committed token, not yet in the cache
  int32_t pos = 0;                                // its position
  int seq = 0;                                    // the slot's cache sequence
  const float* hidden = nullptr;                  // the target's hidden of the row that made it
  const std::vector<int32_t>* history = nullptr;  // every committed token, `last` included
};

class SpeculativeRound {
 public:
  // Starts a request: its drafter (null: none), parameters and constraint (inactive: none).
  // `draft_max_limit` caps the planner; sampled requests price drafts by the static cost model
  // (drafter->BytesPerStep() / target_bytes_per_token). A greedy request after a greedy one
  // with the same drafter and options starts from what that one's planner learned
  // (DraftPlanner::ContinueFrom): returns whether it did.
  bool Start(Drafter* drafter, RoundParams params, const GrammarConstraint& grammar, uint64_t seed,
             int n_vocab, int draft_max_limit, double target_bytes_per_token);
  // The request is over: drops its drafter, drafts and grammar (the planner stays, for the next).
  void End();

  bool speculating() const { return drafter_ != nullptr; }
  Drafter* drafter() const { return drafter_; }
  // Whether the request's text should feed suffix drafting when it ends.
  bool LearnsSuffixes() const { return drafter_ != nullptr && planner_.suffix_on(); }

  // This round's drafts within `budget` rows of the step (the row of the last token included)
  // and `room` (the most drafts the request and the cache can take): the grammar's forced drafts
  // where it alone determines the next tokens (even when the planner chose plain decoding), else
  // the planner's choice, shortened to fit where that cannot change the output. Returns their
  // number, or -1 when the request must wait for a later step (a sampled request with a fixed
  // draft length whose drafts do not fit: its random draws depend on the length).
  // `n_generating`: the slots generating in this step (a greedy request's probes are paced by
  // it). The planning time is counted in stats.plan_ms.
  // `row_room` (-1: room): the most rows after the committed one the cache can take, which a
  // draft tree's branches may fill beyond `room` (they emit no more tokens than its trunk).
  // The reserved rows (the drafts and a tree's branches) are returned.
  int PlanRound(int64_t room, int budget, int n_generating, const std::vector<int32_t>& history,
                SpeculationStats& stats, int64_t row_room = -1);
  // Whether the planned drafts are the drafter's to make (MakeDraftRequest, then SetDrafts).
  bool NeedsDrafter() const { return planned_ > 0 && forced_drafts_ == 0; }
  // The draft request for the planned drafts. With a grammar the drafter follows it and
  // SetDrafts rolls it back. `sampler`: the request's (sampled drafts), or null when greedy.
  DraftRequest MakeDraftRequest(const CommittedState& state, Sampler* sampler);
  // The drafter's drafts for this round and the time spent making them.
  void SetDrafts(DraftResult drafts, double ms, SpeculationStats& stats);

  // The rows of a generation step: [state.last, drafts...] at state.pos..; with logits but for
  // the rows that verify a grammar-forced draft no logits can change. Returns how many carry
  // logits.
  int AddRows(ForwardBatch& batch, const CommittedState& state, SpeculationStats& stats);
  // The tokens a prompt's last row needs logits for (empty: all).
  std::vector<int32_t> PromptLogitTokens(SpeculationStats& stats);
  // Consumes a generation step's rows (its logits from `logit0`): records the forward's time,
  // verifies the drafts and emits each accepted token and the target's next one through `emit`
  // (false once the request stopped), and returns how many drafts were accepted. `history` is the
  // slot's committed tokens, which `emit` extends.
  int OnRows(const ForwardOutput& out, int logit0, double forward_ms, bool record_verify_time,
             const std::vector<int32_t>& history, Sampler& sampler, Rng& rng,
             std::vector<float>& probs, SpeculationStats& stats,
             const std::function<bool(int32_t token, const float* raw_logits)>& emit);
  // The number of drafts of this round (0 after OnRows).
  int drafted() const { return static_cast<int>(drafts_.tokens.size()); }
  // After OnRows: the step rows (relative to the slot's first, the committed token's) of the
  // accepted drafts in order. A chain's are 1..accepted; a tree's follow its accepted path, and
  // the slot moves their K/V to the positions after the committed token (KvCache::CopyPosition).
  const std::vector<int>& kept_rows() const { return kept_rows_; }

  // The target's logits at a committed position, masked by the grammar (if any).
  const float* Constrained(const float* logits);
  // Advances the grammar over an emitted token.
  void Commit(int32_t token);

 private:
  int DraftCap(int64_t room) const;
  bool CanShortenDrafts() const {
    return (greedy_ && params_.synthetic_acceptance.empty()) || params_.spec.adaptive;
  }
  // Forced drafts: up to n of the grammar's (n = 0 clears this round's drafts); none when
  // `drafter_next` and the first would be a layout guess (the drafter drafts there).
  int TakeForcedDrafts(int n, bool drafter_next);
  // SlotGrammar::AppendForced on this round's drafts (guesses priced by the planner's row
  // costs), its flags into forced_guessed_; returns how many it appended.
  int AppendGrammarDrafts(int n_max);
  // Whether draft i is grammar-forced (not a layout guess) and the row verifying it needs no
  // logits: the grammar allows that token alone there, so the masked distribution is a point
  // mass on it whatever the logits (accepted whenever reached). Not when the request wants
  // logprobs, a synthetic acceptance, or bans the token (a -inf logit bias: then the forced
  // token is an error the sampler reports).
  bool ForcedWithoutLogits(int i) const;
  // Whether rows' logits may be limited to the grammar's allowed tokens (ForwardBatch::
  // logit_tokens): a grammar, and nothing that reads the unmasked row (logprobs, benchmarks).
  bool LimitsLogits() const;
  // The grammar's allowed tokens at its current state where they are few enough for a row
  // gather to pay (counted in limited_logit_rows), else empty (every token).
  std::vector<int32_t> LimitedLogitTokens(SpeculationStats& stats);
  void ClearDrafts();
  // Whether the request may draft trees: a width, a drafter, no grammar, no benchmark rates.
  bool TreesAllowed() const;
  // A round's drafter drafts (the first n of this round's, a tree's trunk), the first
  // `accepted` of them accepted: the forced-run policy, the statistics and the planner learn it.
  void RecordDrafterRound(int n, int accepted, const std::vector<int32_t>& history,
                          SpeculationStats& stats);
  // OnRows for a tree's rows (docs/mtp.md § Draft trees).
  int OnTreeRows(const ForwardOutput& out, int logit0, const std::vector<int32_t>& history,
                 Sampler& sampler, Rng& rng, std::vector<float>& probs, SpeculationStats& stats,
                 const std::function<bool(int32_t, const float*)>& emit);

  RoundParams params_;
  bool greedy_ = true;
  int n_vocab_ = 0;
  Drafter* drafter_ = nullptr;
  DraftPlanner planner_;
  const Drafter* planner_drafter_ = nullptr;  // planner_'s drafter (kept past End)
  Rng draft_rng_{0, 1}, synthetic_rng_{0, 2};
  std::unique_ptr<SlotGrammar> grammar_;  // the request's constraint, or null
  ForcedRunPolicy forced_runs_;           // ... whether drafts go on through its forced runs
  int planned_ = 0;                       // this round's planned drafts
  DraftResult drafts_;                    // this round's drafts
  int forced_drafts_ = 0;                 // ... of which the last ones are the grammar's
  std::vector<bool> forced_guessed_;      // ... [i]: the i-th of those is a layout guess
  std::vector<int> row_logits_;           // this round's rows: index among its logits, or -1
  std::vector<float> residual_;           // [n_vocab] scratch
  int tree_extra_ = 0;                    // this round's rows reserved for tree branches
  TreeCalibration tree_calibration_;      // the branches' acceptance against their drafter p
  std::vector<int> kept_rows_;            // kept_rows()
};

}  // namespace tandem
