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

int DraftPlanner::Choose(std::span<const int32_t> history, int cap) {
  plan_lookup_ = 0;
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
  const int t = model_on_ && n > 0 ? tail_.Choose(std::min(cap - n, model_max_)) : 0;
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

void DraftPlanner::RecordDraftTime(int steps, double ms) {
  model_.RecordDraftTime(steps, ms);
  tail_.RecordDraftTime(steps, ms);
}

void DraftPlanner::RecordVerifyTime(int rows, double ms) {
  lookup_.RecordVerifyTime(rows, ms);
  model_.RecordVerifyTime(rows, ms);
  tail_.RecordVerifyTime(rows, ms);
}

void DraftPlanner::CheckUnusedProposal(std::span<const int32_t> history) {
  // The lookup proposal a round did not use is checked against what was emitted, so lookup
  // keeps its evidence while the model drafts or the slot decodes plainly (else it could only
  // win back by probes).
  if (proposal_.empty() || history.size() <= committed_) return;
  const std::span<const int32_t> emitted = history.subspan(committed_);
  const int seen = static_cast<int>(std::min(emitted.size(), proposal_.size()));
  int match = 0;
  while (match < seen && proposal_[match] == emitted[match]) ++match;
  lookup_.RecordRound(match < seen ? match + 1 : match, match);
  proposal_.clear();
}

void DraftPlanner::RecordRound(int n_lookup, int n_drafted, int accepted,
                               std::span<const int32_t> history) {
  const int n_model = n_drafted - n_lookup;
  if (n_lookup == 0) {
    model_.RecordRound(n_model, accepted);
    CheckUnusedProposal(history);
    return;
  }
  lookup_.RecordRound(n_lookup, std::min(accepted, n_lookup));
  // The extension's fate is seen only when every lookup token was accepted.
  if (n_model > 0 && accepted >= n_lookup) tail_.RecordRound(n_model, accepted - n_lookup);
}

}  // namespace tandem
