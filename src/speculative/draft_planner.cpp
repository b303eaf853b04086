#include "speculative/draft_planner.h"

#include <algorithm>

namespace tandem {

DraftPlanner::DraftPlanner(const SpecOptions& spec, int limit, bool model, PastTextSource past)
    : model_on_(model), adaptive_(spec.adaptive), past_(std::move(past)) {
  const int draft_max = std::max(0, std::min(spec.draft_max, limit));
  model_max_ = model_on_ ? draft_max : 0;
  FreeSource& lookup = sources_[kLookup];
  FreeSource& suffix = sources_[kSuffix];
  lookup.on = UsesNgram(spec.type) && spec.ngram;
  suffix.on = UsesSuffix(spec.type) && spec.suffix && past_.drafter != nullptr;
  if (lookup.on) index_.emplace(spec.ngram_min, spec.ngram_max);
  if (lookup.on || suffix.on) {
    lookup_max_ = adaptive_ ? std::min(kLookupMax, std::max(limit, 0)) : draft_max;
  }
  // A free source's controller also rates chained rounds, so it knows verify costs of both parts.
  for (FreeSource& s : sources_) {
    s.ctrl = DraftLengthController(lookup_max_ + model_max_, adaptive_);
    s.ctrl.MarkDraftsFree();
  }
  model_ = DraftLengthController(model_max_, adaptive_);
  tail_ = DraftLengthController(model_max_, adaptive_);
}

bool DraftPlanner::ContinueFrom(const DraftPlanner& earlier) {
  if (model_on_ != earlier.model_on_ || adaptive_ != earlier.adaptive_ ||
      lookup_max_ != earlier.lookup_max_ || model_max_ != earlier.model_max_) {
    return false;
  }
  for (int i = 0; i < kSources; ++i) {
    if (sources_[i].on && earlier.sources_[i].on)
      sources_[i].ctrl.ContinueFrom(earlier.sources_[i].ctrl);
  }
  model_.ContinueFrom(earlier.model_);
  tail_.ContinueFrom(earlier.tail_);
  tail_probe_ = earlier.tail_probe_;
  tail_probe_.ClearCount();
  tail_longest_ = earlier.tail_longest_;
  return true;
}

void DraftPlanner::SetProbeShare(double share) {
  for (FreeSource& s : sources_) s.ctrl.SetProbeShare(share);
  model_.SetProbeShare(share);
  tail_.SetProbeShare(share);
  tail_probe_.SetShare(share);
}

void DraftPlanner::UseStaticCosts(double model_step_cost) {
  for (FreeSource& s : sources_) s.ctrl.UseStaticCosts(0.0);
  model_.UseStaticCosts(model_step_cost);
  tail_.UseStaticCosts(model_step_cost);
}

double DraftPlanner::ModelRate(int n) const {
  return model_.ExpectedTokens(n) / model_.EstimatedRoundMs(n);
}

double DraftPlanner::ChainRate(const FreeSource& s, int n, int t) const {
  const double free = s.ctrl.ExpectedTokens(n);
  const double all_accepted = n > 0 ? free - s.ctrl.ExpectedTokens(n - 1) : 1.0;
  const double expected = free + all_accepted * (tail_.ExpectedTokens(t) - 1.0);
  return expected / (s.ctrl.EstimatedRoundMs(n + t) + t * tail_.DraftStepMs());
}

int DraftPlanner::ChooseTail(const FreeSource& s, int n, int room) {
  // The extension is rated by what it adds to the free proposal's round: each model token
  // costs a draft step and a verify row, and counts only if every free token is accepted. A
  // model step dearer than what its expected tokens buy (a tiny, compute-bound target; a
  // poor assistant) leaves the proposal alone. Lengths climb to at most twice the
  // longest extension tried, so an extrapolated verify cost is checked before it is relied on.
  const int limit = std::min(room, std::max(1, 2 * tail_longest_));
  if (limit <= 0) return 0;
  const double alone = ChainRate(s, n, 0);
  int best = 0;
  double best_rate = (1.0 + DraftLengthController::kMinGain) * alone;
  for (int t = 1; t <= limit; ++t) {
    const double rate = ChainRate(s, n, t);
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
  // budget the proposal-only rounds bank, so the tail's acceptance and step cost stay measured.
  const double round_ms = s.ctrl.EstimatedRoundMs(n);
  const double excess = s.ctrl.EstimatedRoundMs(n + 1) + tail_.DraftStepMs() - round_ms;
  return tail_probe_.Take(excess, round_ms) ? 1 : 0;
}

int DraftPlanner::Choose(std::span<const int32_t> history, int cap) {
  plan_lookup_ = 0;
  plan_source_ = kLookup;
  model_drafted_ = false;
  for (FreeSource& s : sources_) {
    s.proposal.clear();
    s.match = 0;
  }
  committed_ = history.size();
  cap = std::min(cap, MaxDrafts());
  if (cap <= 0) return 0;
  FreeSource& lookup = sources_[kLookup];
  FreeSource& suffix = sources_[kSuffix];
  if (lookup.on) {
    index_->Sync(history);
    lookup.proposal = index_->Propose(std::min(cap, lookup_max_), &lookup.match);
  }
  if (suffix.on) {
    suffix.proposal = past_.drafter->ProposeFromPast(past_.tenant, history,
                                                     std::min(cap, lookup_max_), &suffix.match);
  }
  if (!adaptive_) {  // fixed: the longer match's proposal (ties: lookup), then the model
    plan_source_ = suffix.match > lookup.match ? kSuffix : kLookup;
    plan_lookup_ = static_cast<int>(sources_[plan_source_].proposal.size());
    return model_on_ ? std::min(cap, model_max_) : plan_lookup_;
  }
  // The proposing source whose controller's estimates promise the higher rate drafts (ties:
  // lookup); only its controller then chooses, so the other's probes, re-timings and rounds
  // are not spent on a round it does not draft.
  bool any = false;
  double best_rate = 0;
  for (int i = 0; i < kSources; ++i) {
    const FreeSource& s = sources_[i];
    if (s.proposal.empty()) continue;
    const double rate = s.ctrl.BestByEstimates(static_cast<int>(s.proposal.size())).rate;
    if (!any || rate > best_rate) {
      any = true;
      best_rate = rate;
      plan_source_ = static_cast<Source>(i);
    }
  }
  if (!any) return model_on_ ? model_.Choose(cap) : 0;
  FreeSource& chosen = sources_[plan_source_];
  const int n = chosen.ctrl.Choose(static_cast<int>(chosen.proposal.size()));
  const int t = model_on_ && n > 0 ? ChooseTail(chosen, n, std::min(cap - n, model_max_)) : 0;
  if (model_on_) {
    const int alone = model_.Choose(std::min(cap, model_max_));
    if (alone > 0 && ModelRate(alone) > ChainRate(chosen, n, t)) return alone;
  }
  plan_lookup_ = n;
  return n + t;
}

void DraftPlanner::Fill(int n, DraftRequest& request) const {
  request.n_max = n;
  request.lookup =
      std::span<const int32_t>(sources_[plan_source_].proposal).first(std::min(plan_lookup_, n));
}

TreePlan DraftPlanner::MakeTreePlan(int n, int width, int max_extra, double calibration) const {
  TreePlan plan;
  plan.width = width;
  plan.max_extra = max_extra;
  plan.calibration = calibration;
  double reach = 1.0;
  for (int i = 0; i < n; ++i) {
    reach *= model_.ConditionalAcceptance(i);
    plan.trunk_reach.push_back(reach);
  }
  for (int e = 0; e < max_extra; ++e) plan.row_price.push_back(model_.RowPriceTokens(n, n + 2 + e));
  return plan;
}

int64_t DraftPlanner::probes() const {
  int64_t n = model_.probes() + tail_probe_.probes();
  for (const FreeSource& s : sources_) n += s.ctrl.probes();
  return n;
}

int64_t DraftPlanner::remeasures() const {
  int64_t n = model_.remeasures();
  for (const FreeSource& s : sources_) n += s.ctrl.remeasures();
  return n;
}

void DraftPlanner::RecordDraftTime(int steps, double ms) {
  model_drafted_ = model_drafted_ || steps > 0;
  model_.RecordDraftTime(steps, ms);
  tail_.RecordDraftTime(steps, ms);
}

void DraftPlanner::RecordVerifyTime(int rows, double ms) {
  for (FreeSource& s : sources_) s.ctrl.RecordVerifyTime(rows, ms, model_drafted_);
  model_.RecordVerifyTime(rows, ms);
  tail_.RecordVerifyTime(rows, ms);
}

void DraftPlanner::CheckUnusedProposal(FreeSource& s, std::span<const int32_t> history) {
  // A free proposal no round used is followed as the tokens arrive (plain steps, the model's
  // rounds, the other source's) until it diverges or ends, and recorded as if it had been
  // drafted: its source keeps its evidence at every position while it does not draft (else it
  // could win back only by probes, one token at a time), at no cost. One proposal per source is
  // followed at a time, up to kFollowMax tokens.
  if (s.shadow.empty() && !s.proposal.empty() && history.size() > committed_) {
    s.shadow = std::move(s.proposal);
    // Only its first tokens: evidence must arrive within a few steps, not after a 64-token
    // proposal's end (positions past them inherit their acceptance).
    if (s.shadow.size() > kFollowMax) s.shadow.resize(kFollowMax);
    s.shadow_at = committed_;
  }
  s.proposal.clear();
  if (s.shadow.empty() || history.size() <= s.shadow_at) return;
  const std::span<const int32_t> emitted = history.subspan(s.shadow_at);
  const int seen = static_cast<int>(std::min(emitted.size(), s.shadow.size()));
  int match = 0;
  while (match < seen && s.shadow[match] == emitted[match]) ++match;
  if (match == seen && seen < static_cast<int>(s.shadow.size())) return;  // not resolved yet
  s.ctrl.RecordRound(match < seen ? match + 1 : match, match);
  s.shadow.clear();
}

void DraftPlanner::RecordRound(int n_lookup, int n_drafted, int accepted,
                               std::span<const int32_t> history) {
  const int n_model = n_drafted - n_lookup;
  if (n_lookup == 0) {
    model_.RecordRound(n_model, accepted);
    for (FreeSource& s : sources_) CheckUnusedProposal(s, history);
    return;
  }
  FreeSource& used = sources_[plan_source_];
  used.shadow.clear();  // it drafted: its own evidence supersedes the followed proposal
  used.ctrl.RecordRound(n_lookup, std::min(accepted, n_lookup));
  // Every free draft accepted and the proposal went on: the token the round emitted next
  // shows whether the proposal's next one was right, as if it had been drafted (a point mass is
  // accepted exactly when the target's token equals it). Without it a length ruled out once
  // (a proposal rejected where the text changed) stayed out while the proposals went on
  // matching: lookup kept drafting 2 a round through a loop it predicted exactly.
  const size_t next = committed_ + static_cast<size_t>(n_lookup);
  if (accepted >= n_lookup && used.proposal.size() > static_cast<size_t>(n_lookup) &&
      history.size() > next) {
    used.ctrl.RecordNextPosition(n_lookup, history[next] == used.proposal[n_lookup]);
  }
  for (int i = 0; i < kSources; ++i) {
    if (i != plan_source_) CheckUnusedProposal(sources_[i], history);
  }
  // The extension's fate is seen only when every free token was accepted.
  if (n_model > 0 && accepted >= n_lookup) {
    tail_.RecordRound(n_model, accepted - n_lookup);
    tail_probe_.Observe(accepted > n_lookup);
    tail_longest_ = std::max(tail_longest_, n_model);
  }
}

}  // namespace tandem
