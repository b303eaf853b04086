#include "speculative/draft_planner.h"

#include <algorithm>

namespace tandem {

DraftPlanner::DraftPlanner(const SpecOptions& spec, int limit, bool model)
    : lookup_on_(UsesNgram(spec.type)), model_on_(model), adaptive_(spec.adaptive) {
  const int draft_max = std::max(0, std::min(spec.draft_max, limit));
  model_max_ = model_on_ ? draft_max : 0;
  if (lookup_on_) {
    index_.emplace(spec.ngram_min, spec.ngram_max);
    lookup_max_ = adaptive_ ? std::min(kLookupMax, std::max(limit, 0)) : draft_max;
  }
  // The lookup controller also rates chained rounds, so it knows verify costs of both parts.
  lookup_ = DraftLengthController(lookup_max_ + model_max_, adaptive_);
  lookup_.MarkDraftsFree();
  model_ = DraftLengthController(model_max_, adaptive_);
  tail_ = DraftLengthController(model_max_, adaptive_);
}

void DraftPlanner::UseStaticCosts(double model_step_cost) {
  lookup_.UseStaticCosts(0.0);
  model_.UseStaticCosts(model_step_cost);
  tail_.UseStaticCosts(model_step_cost);
}

double DraftPlanner::ModelRate(int n) const {
  return model_.ExpectedTokens(n) / model_.EstimatedRoundMs(n);
}

double DraftPlanner::ChainRate(int n, int t) const {
  const double lookup = lookup_.ExpectedTokens(n);
  const double all_accepted = n > 0 ? lookup - lookup_.ExpectedTokens(n - 1) : 1.0;
  const double expected = lookup + all_accepted * (tail_.ExpectedTokens(t) - 1.0);
  return expected / (lookup_.EstimatedRoundMs(n + t) + t * tail_.DraftStepMs());
}

int DraftPlanner::ChooseTail(int n, int room) {
  // The extension is rated by what it adds to the lookup proposal's round: each model token
  // costs a draft step and a verify row, and counts only if every lookup token is accepted. A
  // model step dearer than what its expected tokens buy (a tiny, compute-bound target; a
  // poor assistant) leaves the lookup proposal alone. Lengths climb to at most twice the
  // longest extension tried, so an extrapolated verify cost is checked before it is relied on.
  const int limit = std::min(room, std::max(1, 2 * tail_longest_));
  if (limit <= 0) return 0;
  const double alone = ChainRate(n, 0);
  int best = 0;
  double best_rate = (1.0 + DraftLengthController::kMinGain) * alone;
  for (int t = 1; t <= limit; ++t) {
    const double rate = ChainRate(n, t);
    if (rate > best_rate) {
      best_rate = rate;
      best = t;
    }
  }
  if (best > 0) {
    tail_probe_.Reset();
    return best;
  }
  // Extending does not pay by the estimates: probe one model token now and then, out of a
  // budget the lookup-only rounds bank, so the tail's acceptance and step cost stay measured.
  const double round_ms = lookup_.EstimatedRoundMs(n);
  const double excess = lookup_.EstimatedRoundMs(n + 1) + tail_.DraftStepMs() - round_ms;
  return tail_probe_.Take(excess, round_ms) ? 1 : 0;
}

int DraftPlanner::Choose(std::span<const int32_t> history, int cap) {
  plan_lookup_ = 0;
  model_drafted_ = false;
  proposal_.clear();
  committed_ = history.size();
  cap = std::min(cap, MaxDrafts());
  if (cap <= 0) return 0;
  if (lookup_on_) {
    index_->Sync(history);
    proposal_ = index_->Propose(std::min(cap, lookup_max_));
  }
  const int found = static_cast<int>(proposal_.size());
  if (!adaptive_) {  // fixed: the lookup proposal, then the model, to draft_max
    plan_lookup_ = found;
    return model_on_ ? std::min(cap, model_max_) : found;
  }
  if (found == 0) return model_on_ ? model_.Choose(cap) : 0;
  const int n = lookup_.Choose(found);
  const int t = model_on_ && n > 0 ? ChooseTail(n, std::min(cap - n, model_max_)) : 0;
  if (model_on_) {
    const int alone = model_.Choose(std::min(cap, model_max_));
    if (alone > 0 && ModelRate(alone) > ChainRate(n, t)) return alone;
  }
  plan_lookup_ = n;
  return n + t;
}

void DraftPlanner::Fill(int n, DraftRequest& request) const {
  request.n_max = n;
  request.lookup = std::span<const int32_t>(proposal_).first(std::min(plan_lookup_, n));
}

int64_t DraftPlanner::probes() const {
  return lookup_.probes() + model_.probes() + tail_probe_.probes();
}

int64_t DraftPlanner::remeasures() const {
  return lookup_.remeasures() + model_.remeasures();
}

void DraftPlanner::RecordDraftTime(int steps, double ms) {
  model_drafted_ = model_drafted_ || steps > 0;
  model_.RecordDraftTime(steps, ms);
  tail_.RecordDraftTime(steps, ms);
}

void DraftPlanner::RecordVerifyTime(int rows, double ms) {
  lookup_.RecordVerifyTime(rows, ms, model_drafted_);
  model_.RecordVerifyTime(rows, ms);
  tail_.RecordVerifyTime(rows, ms);
}

void DraftPlanner::CheckUnusedProposal(std::span<const int32_t> history) {
  // A lookup proposal no round used is followed as the tokens arrive (plain steps or the model's
  // rounds) until it diverges or ends, and recorded as if it had been drafted: lookup keeps its
  // evidence at every position while it does not draft (else it could win back only by
  // probes, one token at a time), at no cost. One proposal is followed at a time, up to
  // kFollowMax tokens.
  if (shadow_.empty() && !proposal_.empty() && history.size() > committed_) {
    shadow_ = std::move(proposal_);
    // Only its first tokens: evidence must arrive within a few steps, not after a 64-token
    // proposal's end (positions past them inherit their acceptance).
    if (shadow_.size() > kFollowMax) shadow_.resize(kFollowMax);
    shadow_at_ = committed_;
  }
  proposal_.clear();
  if (shadow_.empty() || history.size() <= shadow_at_) return;
  const std::span<const int32_t> emitted = history.subspan(shadow_at_);
  const int seen = static_cast<int>(std::min(emitted.size(), shadow_.size()));
  int match = 0;
  while (match < seen && shadow_[match] == emitted[match]) ++match;
  if (match == seen && seen < static_cast<int>(shadow_.size())) return;  // not resolved yet
  lookup_.RecordRound(match < seen ? match + 1 : match, match);
  shadow_.clear();
}

void DraftPlanner::RecordRound(int n_lookup, int n_drafted, int accepted,
                               std::span<const int32_t> history) {
  const int n_model = n_drafted - n_lookup;
  if (n_lookup == 0) {
    model_.RecordRound(n_model, accepted);
    CheckUnusedProposal(history);
    return;
  }
  shadow_.clear();  // the lookup drafted: its own evidence supersedes the followed proposal
  lookup_.RecordRound(n_lookup, std::min(accepted, n_lookup));
  // Every lookup draft accepted and the proposal went on: the token the round emitted next
  // shows whether the proposal's next one was right, as if it had been drafted (a point mass is
  // accepted exactly when the target's token equals it). Without it a length ruled out once
  // (a proposal rejected where the text changed) stayed out while the proposals went on
  // matching: lookup kept drafting 2 a round through a loop it predicted exactly.
  const size_t next = committed_ + static_cast<size_t>(n_lookup);
  if (accepted >= n_lookup && proposal_.size() > static_cast<size_t>(n_lookup) &&
      history.size() > next) {
    lookup_.RecordNextPosition(n_lookup, history[next] == proposal_[n_lookup]);
  }
  // The extension's fate is seen only when every lookup token was accepted.
  if (n_model > 0 && accepted >= n_lookup) {
    tail_.RecordRound(n_model, accepted - n_lookup);
    tail_probe_.Observe(accepted > n_lookup);
    tail_longest_ = std::max(tail_longest_, n_model);
  }
}

}  // namespace tandem
