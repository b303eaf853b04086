#include "speculative/speculative_round.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/stopwatch.h"
#include "speculative/drafter_registry.h"
#include "speculative/speculative_accept.h"

namespace tandem {

bool SpeculativeRound::Start(Drafter* drafter, RoundParams params, const GrammarConstraint& grammar,
                             uint64_t seed, int n_vocab, int draft_max_limit,
                             double target_bytes_per_token) {
  // The last request's planner, to start this one's estimates from (below).
  const DraftPlanner earlier = std::move(planner_);
  const bool earlier_alike = planner_drafter_ != nullptr && greedy_ &&
                             planner_drafter_ == drafter && params_.spec == params.spec &&
                             params_.synthetic_acceptance.empty();
  params_ = std::move(params);
  n_vocab_ = n_vocab;
  greedy_ = params_.sampling.greedy();
  draft_rng_ = Rng(seed, 1);
  synthetic_rng_ = Rng(seed, 2);
  drafter_ = params_.spec.type == SpecType::kNone ? nullptr : drafter;
  planner_drafter_ = drafter_;
  // Capping the planner at the most drafts a round can hold changes none of its choices (it
  // never looks past the cap) but bounds its memory for absurd requests.
  planner_ = DraftPlanner(
      drafter_ ? params_.spec : SpecOptions{}, draft_max_limit,
      drafter_ != nullptr && DrafterEntryOf(params_.spec.type).model != DrafterModel::kNone,
      {drafter_, params_.tenant});
  // Sampled output depends on the draft lengths, so they must not depend on measured times.
  if (drafter_ && !greedy_) {
    planner_.UseStaticCosts(drafter_->BytesPerStep() / target_bytes_per_token);
  }
  // A greedy request after a greedy one with the same drafter and options starts from what that
  // one learned (acceptance, the plain and draft step times, the probes' spacing:
  // DraftPlanner::ContinueFrom) instead of the prior: a stream of short requests does not pay
  // each one's learning rounds (an assistant that is never right drafted the first rounds of
  // every request). Greedy output does not depend on draft lengths.
  const bool continued = earlier_alike && greedy_ && params_.synthetic_acceptance.empty() &&
                         planner_.ContinueFrom(earlier);
  residual_.resize(n_vocab);
  // A sampled request's tree shapes depend only on its seed and text (the reproducibility
  // above): it starts from the prior, as it does from the planner's.
  if (!continued) tree_calibration_ = TreeCalibration();
  ClearDrafts();
  forced_runs_ = ForcedRunPolicy();
  grammar_ = grammar.active() ? std::make_unique<SlotGrammar>(grammar, n_vocab) : nullptr;
  return continued;
}

void SpeculativeRound::End() {
  drafter_ = nullptr;
  ClearDrafts();
  grammar_.reset();
}

void SpeculativeRound::ClearDrafts() {
  drafts_.Clear();
  planned_ = 0;
  tree_extra_ = 0;
  forced_drafts_ = 0;
  forced_guessed_.clear();
}

int SpeculativeRound::DraftCap(int64_t room) const {
  // Without a drafter only a grammar's forced runs are drafted (jump-forward decoding: no
  // speculation, each such draft is the grammar's only choice), up to draft_max.
  if (drafter_ == nullptr && !grammar_) return 0;
  const int most = drafter_ != nullptr ? planner_.MaxDrafts() : params_.spec.draft_max;
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(room, most)));
}

int SpeculativeRound::PlanRound(int64_t room, int budget, int n_generating,
                                const std::vector<int32_t>& history, SpeculationStats& stats,
                                int64_t row_room) {
  ClearDrafts();
  const int cap = DraftCap(room);
  int n_draft = 0;
  if (cap > 0) {
    const auto t0 = SteadyClock::now();
    // A greedy request's probes are paced by the batch: each slot's probe holds up every
    // generating slot, so together they bank one ProbeBudget::kShare. A sampled request's
    // drafts may depend only on its seed, so its pace stays its own.
    if (greedy_) planner_.SetProbeShare(ProbeBudget::kShare / std::max(1, n_generating));
    n_draft = planner_.Choose(history, cap);
    stats.plan_ms += MsSince(t0);
  }
  // True if a shorter draft than chosen cannot change the output: greedy (verification keeps
  // the target's argmax) or adaptive (lengths already depend on timing). Sampled (or synthetic-
  // acceptance) requests with a fixed draft length must get exactly that length, or wait.
  const bool can_shorten = CanShortenDrafts();
  // Where the grammar alone determines the next tokens, they fill this round's drafts up to the
  // cap, even when the planner chose plain decoding: no drafter step, only verify rows, each a
  // point mass at verification (accepted whenever reached, with the one random draw plain
  // sampling makes there).
  const int forced = TakeForcedDrafts(can_shorten ? std::min(cap, budget - 1) : cap, n_draft > 0);
  if (forced > 0) n_draft = forced;
  if (1 + n_draft > budget) {
    if (!can_shorten) {
      ClearDrafts();
      return -1;
    }
    n_draft = budget - 1;
  }
  planned_ = n_draft;
  // A tree's branches take rows beside the planned chain: reserved here, so that the step's
  // budget holds them (the drafter returns what it did not use).
  if (TreesAllowed() && n_draft > 0 && forced_drafts_ == 0 && planner_.ModelAlone()) {
    tree_extra_ = static_cast<int>(
        std::max<int64_t>(0, std::min<int64_t>({kMaxTreeBranches, budget - 1 - n_draft,
                                                (row_room < 0 ? room : row_room) - n_draft})));
  }
  return n_draft + tree_extra_;
}

bool SpeculativeRound::TreesAllowed() const {
  return params_.spec.tree_width >= 2 && drafter_ != nullptr &&
         DrafterEntryOf(params_.spec.type).trees && !grammar_ &&
         params_.synthetic_acceptance.empty();
}

DraftRequest SpeculativeRound::MakeDraftRequest(const CommittedState& state, Sampler* sampler) {
  DraftRequest request;
  request.last = state.last;
  request.pos = state.pos;
  request.seq = state.seq;
  request.hidden = state.hidden;
  request.history = *state.history;
  planner_.Fill(planned_, request);
  request.n_min = params_.spec.draft_min;
  request.p_min = params_.spec.draft_p_min;
  // A request that may draft trees verifies by following the target's own draws (OnTreeRows),
  // for which the drafter's top choice is the likeliest draft: its drafts are not sampled.
  request.sampler = greedy_ || TreesAllowed() ? nullptr : sampler;
  request.rng = &draft_rng_;
  if (tree_extra_ > 0) {
    request.tree = planner_.MakeTreePlan(planned_, params_.spec.tree_width, tree_extra_,
                                         tree_calibration_.Factor());
  }
  if (grammar_) {
    grammar_->BeginDraft();
    request.constraint = grammar_.get();
    request.forced_run_max = forced_runs_.Limit();
  }
  return request;
}

int SpeculativeRound::TakeForcedDrafts(int n, bool drafter_next) {
  drafts_.Clear();
  forced_drafts_ = grammar_ && n > 0 ? AppendGrammarDrafts(n) : 0;
  if (drafter_next && forced_drafts_ > 0 && forced_guessed_[0]) {
    // A choice comes first: the drafter drafts it, the grammar's part follows its drafts.
    drafts_.Clear();
    forced_drafts_ = 0;
  }
  return forced_drafts_;
}

int SpeculativeRound::AppendGrammarDrafts(int n_max) {
  // Layout guesses are speculation: none without a drafter. A sampled request's drafts must not
  // depend on measured times (see Start), nor do fixed draft lengths (--no-adaptive): there a
  // row costs the static model's share.
  const auto row_cost = [this](int rows) {
    if (drafter_ == nullptr) return std::numeric_limits<double>::infinity();
    return greedy_ && params_.spec.adaptive ? planner_.RowCostShare(rows)
                                            : DraftLengthController::kStaticRowCost;
  };
  return grammar_->AppendForced(drafts_, n_max, !greedy_, row_cost, forced_guessed_);
}

void SpeculativeRound::SetDrafts(DraftResult drafts, double ms, SpeculationStats& stats) {
  drafts_ = std::move(drafts);
  forced_drafts_ = 0;
  forced_guessed_.clear();
  if (grammar_) {
    // Drafts end at the first token the grammar rejects (a drafter that reads no logits), and
    // the tokens it forces after them cost nothing to draft.
    grammar_->EndDraft();
    const int asked = static_cast<int>(drafts_.tokens.size());
    grammar_->CutDrafts(drafts_);
    if (static_cast<int>(drafts_.tokens.size()) == asked) {
      forced_drafts_ = AppendGrammarDrafts(planned_);
    }
  }
  stats.draft_ms += ms;
  planner_.RecordDraftTime(drafts_.steps, ms);
  forced_runs_.RecordDraft(drafts_.steps, ms);
}

const float* SpeculativeRound::Constrained(const float* logits) {
  return grammar_ ? grammar_->Mask(logits) : logits;
}

void SpeculativeRound::Commit(int32_t token) {
  if (grammar_) grammar_->Commit(token);
}

bool SpeculativeRound::LimitsLogits() const {
  return grammar_ && params_.limit_constrained_logits && !params_.wants_logprobs &&
         params_.synthetic_acceptance.empty();
}

std::vector<int32_t> SpeculativeRound::LimitedLogitTokens(SpeculationStats& stats) {
  // A gathered head row costs more than a streamed one, and more so as the gather grows: up to
  // an eighth of the vocabulary a gather still costs well under the full product
  // (bench_matmul head_gather; bench/README.md § Kernel choices).
  std::vector<int32_t> ids;
  if (!grammar_->AllowedTokens(n_vocab_ / 8, ids)) return {};
  std::erase_if(ids, [&](int32_t id) { return id >= n_vocab_; });
  if (!ids.empty()) ++stats.limited_logit_rows;
  return ids;
}

std::vector<int32_t> SpeculativeRound::PromptLogitTokens(SpeculationStats& stats) {
  return LimitsLogits() ? LimitedLogitTokens(stats) : std::vector<int32_t>{};
}

bool SpeculativeRound::ForcedWithoutLogits(int i) const {
  const int first = static_cast<int>(drafts_.tokens.size()) - forced_drafts_;
  if (i < first || forced_guessed_[i - first]) return false;
  if (params_.wants_logprobs || !params_.synthetic_acceptance.empty()) return false;
  const int32_t token = drafts_.tokens[i];
  for (const LogitBias& b : params_.sampling.logit_bias) {
    if (b.token == token && b.bias == -std::numeric_limits<float>::infinity()) return false;
  }
  return true;
}

int SpeculativeRound::AddRows(ForwardBatch& batch, const CommittedState& state,
                              SpeculationStats& stats) {
  const int k = static_cast<int>(drafts_.tokens.size());
  if (drafts_.is_tree()) {  // no grammar: every row has logits
    row_logits_.resize(k + 1);
    const int root = batch.size();
    batch.Add(state.last, state.pos, state.seq, true);
    for (int i = 0; i < k; ++i) {
      row_logits_[i] = i;
      batch.Add(drafts_.tokens[i], state.pos + 1 + i, state.seq, true);
      batch.SetTreeParent(root + 1 + drafts_.tree_parent[i]);
    }
    row_logits_[k] = k;
    ++stats.tree_rounds;
    stats.tree_branches += k - drafts_.trunk;
    return k + 1;
  }
  // Row r's logits verify draft r (the last row's choose the next token).
  row_logits_.assign(k + 1, -1);
  int n_logits = 0;
  for (int r = 0; r <= k; ++r) {
    if (r == k || !ForcedWithoutLogits(r)) row_logits_[r] = n_logits++;
  }
  // Row r's grammar state is the committed one advanced over drafts 0..r-1 (the row is verified
  // only if they were accepted).
  const bool limit = LimitsLogits();
  if (limit) grammar_->BeginDraft();
  for (int r = 0; r <= k; ++r) {
    const bool logits = row_logits_[r] >= 0;
    batch.Add(r == 0 ? state.last : drafts_.tokens[r - 1], state.pos + r, state.seq, logits,
              limit && logits ? LimitedLogitTokens(stats) : std::vector<int32_t>{});
    if (limit && r < k) grammar_->Advance(drafts_.tokens[r]);
  }
  if (limit) grammar_->EndDraft();
  return n_logits;
}

int SpeculativeRound::OnRows(const ForwardOutput& out, int logit0, double forward_ms,
                             bool record_verify_time, const std::vector<int32_t>& history,
                             Sampler& sampler, Rng& rng, std::vector<float>& probs,
                             SpeculationStats& stats,
                             const std::function<bool(int32_t, const float*)>& emit) {
  const int k = static_cast<int>(drafts_.tokens.size());
  stats.verify_ms += forward_ms;
  if (record_verify_time) {
    planner_.RecordVerifyTime(k + 1, forward_ms);
    forced_runs_.RecordForward(forward_ms);
  }
  stats.probes = planner_.probes();  // this round's plan included
  stats.remeasures = planner_.remeasures();
  kept_rows_.clear();
  // A sampled request that may draft trees verifies its chains by the tree's rule too: its
  // output then never depends on the shape the step's budget allowed (docs/mtp.md).
  if (drafts_.is_tree() || (k > 0 && TreesAllowed() && !greedy_)) {
    return OnTreeRows(out, logit0, history, sampler, rng, probs, stats, emit);
  }
  if (k == 0) {
    ++stats.plain_steps;
    stats.plain_ms += forward_ms;
    const float* logits = out.Logits(logit0 + row_logits_[0]);
    emit(sampler.Sample(Constrained(logits), n_vocab_, history, rng, probs), logits);
    if (drafter_ != nullptr) {
      const auto t0 = SteadyClock::now();
      planner_.RecordPlainStep(history);
      stats.plan_ms += MsSince(t0);
    }
    ClearDrafts();
    return 0;
  }
  // Verify: greedy accepts while the draft equals the target's choice;
  // sampling accepts with probability min(1, p/q) and otherwise resamples from the residual.
  // (A synthetic-acceptance benchmark request is not lossless: its drafts' lengths matter.)
  int accepted = 0;
  bool going = true;
  for (int i = 0; i <= k && going; ++i) {
    if (row_logits_[i] < 0) {
      // A grammar-forced draft (ForcedWithoutLogits): accepted, with the one random draw the
      // point-mass rule makes (so sampled output is the same as with the logits).
      if (!greedy_) rng.Uniform();
      ++accepted;
      kept_rows_.push_back(i + 1);
      if (InRepetitionLoop(history)) ++stats.repetition_accepted;
      going = emit(drafts_.tokens[i], nullptr);
      continue;
    }
    // The grammar state is the committed one: every token emitted so far this round was a draft.
    const float* raw = out.Logits(logit0 + row_logits_[i]);
    const float* logits = Constrained(raw);
    int32_t token;
    bool match = false;
    if (i < k && !params_.synthetic_acceptance.empty()) {
      // Benchmarks only: accept at a chosen rate instead of verifying.
      const std::vector<float>& rates = params_.synthetic_acceptance;
      match = synthetic_rng_.Uniform() < rates[std::min<size_t>(i, rates.size() - 1)];
      token = match ? drafts_.tokens[i] : sampler.Sample(logits, n_vocab_, history, rng, probs);
    } else if (i < k && !greedy_) {
      sampler.Distribution(logits, n_vocab_, history, probs);
      SpeculativeOutcome o =
          SpeculativeAccept(probs, drafts_.q[i], drafts_.tokens[i], rng, residual_);
      token = o.token;
      match = o.accepted;
    } else {
      token = sampler.Sample(logits, n_vocab_, history, rng, probs);
      match = i < k && token == drafts_.tokens[i];
    }
    if (match) {
      ++accepted;
      kept_rows_.push_back(i + 1);
      if (InRepetitionLoop(history)) ++stats.repetition_accepted;
    }
    going = emit(token, raw);
    if (!match) break;
  }
  // Grammar-forced drafts (the last forced_drafts_) are counted apart from the drafters'.
  const int k_drafter = k - forced_drafts_;
  if (forced_drafts_ > 0) {
    const auto guesses = stats.RecordForced(forced_guessed_, k_drafter, accepted);
    grammar_->RecordGuesses(guesses.reached, guesses.accepted);
  }
  if (k_drafter > 0) {
    RecordDrafterRound(k_drafter, std::min(accepted, k_drafter), history, stats);
  } else {
    ++stats.rounds;
  }
  ClearDrafts();
  return accepted;
}

void SpeculativeRound::RecordDrafterRound(int n, int accepted, const std::vector<int32_t>& history,
                                          SpeculationStats& stats) {
  forced_runs_.RecordRound(std::min(accepted + 1, n), accepted);
  stats.RecordRound(n, accepted, drafts_.n_lookup,
                    planner_.planned_source() == DraftPlanner::kSuffix);
  const auto t0 = SteadyClock::now();
  planner_.RecordRound(drafts_.n_lookup, n, accepted, history);
  stats.plan_ms += MsSince(t0);
}

int SpeculativeRound::OnTreeRows(const ForwardOutput& out, int logit0,
                                 const std::vector<int32_t>& history, Sampler& sampler, Rng& rng,
                                 std::vector<float>& probs, SpeculationStats& stats,
                                 const std::function<bool(int32_t, const float*)>& emit) {
  // From the root: the target's token at the node (its argmax, or one draw from its
  // distribution), then the child that carries it, if any. Every candidate is a point mass (its
  // node's top choice), for which following the child that equals the target's own draw is the
  // lossless multi-candidate rule: the emitted tokens are the target's.
  const int k = static_cast<int>(drafts_.tokens.size());
  // A chain is the tree whose every draft is the parent of the next, all of it trunk.
  const bool tree = drafts_.is_tree();
  const int trunk = tree ? drafts_.trunk : k;
  auto parent_of = [&](int i) { return tree ? drafts_.tree_parent[i] : i - 1; };
  int node = -1, accepted = 0, trunk_accepted = 0;
  std::vector<bool> tested(k, false), taken(k, false);
  for (;;) {
    const float* raw = out.Logits(logit0 + row_logits_[node + 1]);
    const int32_t token = sampler.Sample(raw, n_vocab_, history, rng, probs);
    int child = -1;
    for (int i = 0; i < k; ++i) {
      if (parent_of(i) != node) continue;
      tested[i] = true;
      if (child < 0 && drafts_.tokens[i] == token) child = i;
    }
    if (child >= 0) {
      ++accepted;
      taken[child] = true;
      if (child < trunk && trunk_accepted == child) ++trunk_accepted;
      kept_rows_.push_back(child + 1);
      if (InRepetitionLoop(history)) ++stats.repetition_accepted;
    }
    const bool going = emit(token, raw);
    if (child < 0 || !going) break;
    node = child;
  }
  for (int i = trunk; i < k; ++i) {
    if (!tested[i]) continue;
    tree_calibration_.Record(drafts_.tree_p[i], taken[i]);
    if (taken[i]) ++stats.tree_branches_accepted;
  }
  // The planner and the per-source statistics see the trunk as the round's chain; the
  // branches' share is in tree_branches(_accepted) and the round's totals.
  RecordDrafterRound(trunk, trunk_accepted, history, stats);
  stats.drafted += k - trunk;
  stats.accepted += accepted - trunk_accepted;
  ClearDrafts();
  return accepted;
}

}  // namespace tandem
