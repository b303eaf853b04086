// One serving slot's request: prompt-cache reuse, prefill progress, and the speculative round's
// verify, accept, emit and stop, driven one step at a time by the engine.
#include "engine/engine_slot.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "engine/prompt_media.h"
#include "speculative/drafter_registry.h"
#include "speculative/speculative_accept.h"

namespace tandem {

void ValidateEngineRequest(const EngineRequest& request, int n_vocab, int n_ctx, bool has_drafter) {
  const std::vector<int32_t>& prompt = request.prompt;
  const int n_prompt = static_cast<int>(prompt.size());
  if (n_prompt == 0) Fail(ErrorKind::kInvalidArgument, "the prompt is empty");
  if (n_prompt >= n_ctx) {
    Fail(ErrorKind::kInvalidArgument, "the prompt has " + std::to_string(n_prompt) +
                                          " tokens, which does not fit a context of " +
                                          std::to_string(n_ctx));
  }
  for (int i = 0; i < n_prompt; ++i) {
    if (prompt[i] < 0 || prompt[i] >= n_vocab) {
      Fail(ErrorKind::kInvalidArgument, "prompt token " + std::to_string(i) + " has id " +
                                            std::to_string(prompt[i]) + ", outside [0, " +
                                            std::to_string(n_vocab) + ")");
    }
  }
  const GenerateParams& p = request.params;
  ValidateSamplingParams(p.sampling);
  for (const LogitBias& b : p.sampling.logit_bias) {
    if (b.token < 0 || b.token >= n_vocab) {
      Fail(ErrorKind::kInvalidArgument, "sampling: logit_bias token " + std::to_string(b.token) +
                                            " is outside [0, " + std::to_string(n_vocab) + ")");
    }
  }
  ValidateGrammarConstraint(p.grammar, p.eog_tokens, n_vocab);
  if (p.top_logprobs > kMaxTopLogprobs) {
    Fail(ErrorKind::kInvalidArgument,
         "top_logprobs must be at most " + std::to_string(kMaxTopLogprobs));
  }
  if (p.spec.type != SpecType::kNone && !has_drafter) {
    const DrafterModel model = DrafterEntryOf(p.spec.type).model;
    Fail(ErrorKind::kInvalidArgument,
         std::string(SpecTypeName(p.spec.type)) + " speculation asked for, but " +
             (model == DrafterModel::kAssistant  ? "no assistant is loaded"
              : model == DrafterModel::kSeparate ? "no draft model is loaded"
                                                 : "its drafter is not loaded"));
  }
  ValidateSpecOptions(p.spec);
}

EngineSlot::EngineSlot(int seq, KvCache& cache, int n_vocab, int n_embd, bool media_both_ways)
    : seq_(seq),
      cache_(cache),
      n_vocab_(n_vocab),
      n_embd_(n_embd),
      media_both_ways_(media_both_ways) {}

int EngineSlot::ReusablePrefix(const EngineRequest& request) const {
  const std::vector<uint64_t> keys = PromptKeys(request);
  // At least one prompt token is evaluated, for its logits.
  size_t common = 0;
  while (common < cached_.size() && common + 1 < keys.size() && cached_[common] == keys[common]) {
    ++common;
  }
  // An image is evaluated whole or not at all.
  if (const PromptMedia* m = MediaAt(request.media, static_cast<int32_t>(common))) {
    common = static_cast<size_t>(m->begin);
  }
  if (common == 0 || !cache_.CanTruncateTo(seq_, static_cast<int32_t>(common))) return 0;
  return static_cast<int>(common);
}

void EngineSlot::Forget() {
  if (active()) return;
  cache_.Clear(seq_);
  cached_.clear();
}

void EngineSlot::Start(uint64_t id, EngineRequest request, uint64_t stamp, int draft_max_limit,
                       Drafter* drafter, double target_bytes_per_token) {
  const int common = ReusablePrefix(request);
  if (common > 0) {
    cache_.Truncate(seq_, common);
  } else {
    cache_.Clear(seq_);
  }
  cached_.clear();
  last_used_ = stamp;

  phase_ = SlotPhase::kPrefill;
  id_ = id;
  prompt_keys_ = PromptKeys(request);
  prompt_ = std::move(request.prompt);
  media_ = std::move(request.media);
  // The last request's planner, to start this one's estimates from (below).
  const DraftPlanner earlier = std::move(planner_);
  const bool earlier_alike = planner_drafter_ != nullptr && greedy_ &&
                             planner_drafter_ == drafter && params_.spec == request.params.spec &&
                             params_.synthetic_acceptance.empty();
  params_ = std::move(request.params);
  on_event_ = std::move(request.on_event);
  sampler_ = Sampler(params_.sampling);
  const uint64_t seed = ResolveSeed(params_.sampling.seed);
  rng_ = Rng(seed, 0);
  draft_rng_ = Rng(seed, 1);
  synthetic_rng_ = Rng(seed, 2);
  greedy_ = params_.sampling.greedy();
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
  max_tokens_ = params_.n_predict < 0 ? std::numeric_limits<int64_t>::max() : params_.n_predict;
  result_ = GenerateResult();
  result_.spec.continued = continued ? 1 : 0;
  result_.prompt_tokens = static_cast<int>(prompt_.size());
  result_.cached_prompt_tokens = common;
  result_.prompt_media = static_cast<int>(media_.size());
  for (const PromptMedia& m : media_) result_.prompt_audio += m.audio ? 1 : 0;
  error_.clear();
  stopped_by_client_ = false;
  new_tokens_ = 0;
  t_prompt_ = EngineClock::now();
  generating_started_ = false;
  prefill_pos_ = common;
  planned_prefill_ = 0;
  history_.assign(prompt_.begin(), prompt_.end());
  hidden_.assign(n_embd_, 0.0f);
  probs_.resize(n_vocab_);
  residual_.resize(n_vocab_);
  drafts_.Clear();
  forced_drafts_ = 0;
  forced_runs_ = ForcedRunPolicy();
  grammar_ =
      params_.grammar.active() ? std::make_unique<SlotGrammar>(params_.grammar, n_vocab_) : nullptr;
}

PromptMedia* EngineSlot::PendingMedia() {
  if (phase_ != SlotPhase::kPrefill) return nullptr;
  for (PromptMedia& m : media_) {
    if (m.begin + m.count > prefill_pos_ && !m.embeddings) return &m;
  }
  return nullptr;
}

bool EngineSlot::AdvanceMedia(ThreadPool& pool) {
  PromptMedia* m = PendingMedia();
  if (m == nullptr) return false;
  const auto t0 = EngineClock::now();
  if (m->job->Step(pool)) {
    std::shared_ptr<const std::vector<float>> rows = m->job->Result();
    if (!rows || rows->size() != static_cast<size_t>(m->count) * n_embd_) {
      Fail("media encoding gave " + std::to_string(rows ? rows->size() : 0) + " values for " +
           std::to_string(m->count) + " rows of " + std::to_string(n_embd_));
    } else {
      m->embeddings = std::move(rows);
      m->job.reset();
    }
  }
  const double ms = MsSince(t0);
  result_.media_encode_ms += ms;
  if (m->audio) result_.audio_encode_ms += ms;
  return true;
}

int EngineSlot::PlanPrefill(int n_rows, int room) {
  // Rows stop before an image whose rows are not made yet (AdvanceMedia makes them).
  if (const PromptMedia* pending = PendingMedia()) {
    n_rows = std::min(n_rows, std::max(0, pending->begin - prefill_pos_));
  }
  if (media_both_ways_ && n_rows > 0) {
    const PromptMedia* m = MediaAt(media_, prefill_pos_ + n_rows - 1);
    if (m != nullptr && !m->audio) {
      const int end = m->begin + m->count;
      if (m->begin > prefill_pos_) {
        n_rows = m->begin - prefill_pos_;
      } else {
        n_rows = end - prefill_pos_ <= room ? end - prefill_pos_ : 0;
      }
    }
  }
  planned_prefill_ = n_rows;
  return n_rows;
}

int EngineSlot::DraftCap() const {
  // Without a drafter only a grammar's forced runs are drafted (jump-forward decoding: no
  // speculation, each such draft is the grammar's only choice), up to draft_max.
  if (drafter_ == nullptr && !grammar_) return 0;
  const int most = drafter_ != nullptr ? planner_.MaxDrafts() : params_.spec.draft_max;
  const int64_t pos = static_cast<int64_t>(history_.size()) - 1;
  const int64_t remaining = max_tokens_ - result_.spec.generated;
  const int64_t cap =
      std::min<int64_t>({remaining - 1, cache_.n_ctx() - pos - 1, cache_.max_batch() - 1, most});
  return static_cast<int>(std::max<int64_t>(0, cap));
}

int EngineSlot::ChooseDraftLength(int cap, int n_generating) {
  const auto t0 = EngineClock::now();
  // A greedy request's probes are paced by the batch: each slot's probe holds up every
  // generating slot, so together they bank one ProbeBudget::kShare. A sampled request's drafts
  // may depend only on its seed, so its pace stays its own.
  if (greedy_) planner_.SetProbeShare(ProbeBudget::kShare / std::max(1, n_generating));
  const int n = planner_.Choose(history_, cap);
  result_.spec.plan_ms += MsSince(t0);
  return n;
}

DraftRequest EngineSlot::MakeDraftRequest(int n) {
  DraftRequest request;
  request.last = history_.back();
  request.pos = static_cast<int32_t>(history_.size()) - 1;
  request.seq = seq_;
  request.hidden = hidden_.data();
  request.history = history_;
  planner_.Fill(n, request);
  request.n_min = params_.spec.draft_min;
  request.p_min = params_.spec.draft_p_min;
  request.sampler = greedy_ ? nullptr : &sampler_;
  request.rng = &draft_rng_;
  draft_n_max_ = n;
  if (grammar_) {
    grammar_->BeginDraft();
    request.constraint = grammar_.get();
    request.forced_run_max = forced_runs_.Limit();
  }
  return request;
}

int EngineSlot::TakeForcedDrafts(int n, bool drafter_next) {
  drafts_.Clear();
  forced_drafts_ = grammar_ && n > 0 ? AppendGrammarDrafts(n) : 0;
  if (drafter_next && forced_drafts_ > 0 && forced_guessed_[0]) {
    // A choice comes first: the drafter drafts it, the grammar's part follows its drafts.
    drafts_.Clear();
    forced_drafts_ = 0;
  }
  return forced_drafts_;
}

int EngineSlot::AppendGrammarDrafts(int n_max) {
  // Layout guesses are speculation: none without a drafter. A sampled request's drafts must not
  // depend on measured times (see Reset), nor do fixed draft lengths (--no-adaptive): there a
  // row costs the static model's share.
  const auto row_cost = [this](int rows) {
    if (drafter_ == nullptr) return std::numeric_limits<double>::infinity();
    return greedy_ && params_.spec.adaptive ? planner_.RowCostShare(rows)
                                            : DraftLengthController::kStaticRowCost;
  };
  return grammar_->AppendForced(drafts_, n_max, !greedy_, row_cost, forced_guessed_);
}

void EngineSlot::SetDrafts(DraftResult drafts, double ms) {
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
      forced_drafts_ = AppendGrammarDrafts(draft_n_max_);
    }
  }
  result_.spec.draft_ms += ms;
  planner_.RecordDraftTime(drafts_.steps, ms);
  forced_runs_.RecordDraft(drafts_.steps, ms);
}

const float* EngineSlot::Constrained(const float* logits) {
  return grammar_ ? grammar_->Mask(logits) : logits;
}

int EngineSlot::AddRows(ForwardBatch& batch) {
  if (phase_ == SlotPhase::kPrefill) {
    const int n_prompt = static_cast<int>(prompt_.size());
    const int end = prefill_pos_ + planned_prefill_;
    for (int i = prefill_pos_; i < end; ++i) {
      const bool last = i == n_prompt - 1;
      if (const PromptMedia* m = MediaAt(media_, i)) {
        const float* row = m->embeddings->data() + static_cast<size_t>(i - m->begin) * n_embd_;
        const bool both_ways = media_both_ways_ && !m->audio;
        batch.AddEmbedding(row, i, seq_, both_ways ? m->begin + m->count - 1 : i, last);
        continue;
      }
      batch.Add(prompt_[i], i, seq_, last,
                last && LimitsLogits() ? LimitedLogitTokens() : std::vector<int32_t>{});
    }
    return end == n_prompt ? 1 : 0;
  }
  step_pos_ = static_cast<int32_t>(history_.size()) - 1;
  const int k = static_cast<int>(drafts_.tokens.size());
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
    batch.Add(r == 0 ? history_.back() : drafts_.tokens[r - 1], step_pos_ + r, seq_, logits,
              limit && logits ? LimitedLogitTokens() : std::vector<int32_t>{});
    if (limit && r < k) grammar_->Advance(drafts_.tokens[r]);
  }
  if (limit) grammar_->EndDraft();
  return n_logits;
}

bool EngineSlot::LimitsLogits() const {
  return grammar_ && params_.limit_constrained_logits && params_.top_logprobs < 0 &&
         params_.synthetic_acceptance.empty();
}

std::vector<int32_t> EngineSlot::LimitedLogitTokens() {
  // A gathered head row costs more than a streamed one, and more so as the gather grows: up to
  // an eighth of the vocabulary a gather still costs well under the full product
  // (bench_matmul head_gather; bench/README.md § Kernel choices).
  std::vector<int32_t> ids;
  if (!grammar_->AllowedTokens(n_vocab_ / 8, ids)) return {};
  std::erase_if(ids, [&](int32_t id) { return id >= n_vocab_; });
  if (!ids.empty()) ++result_.spec.limited_logit_rows;
  return ids;
}

bool EngineSlot::ForcedWithoutLogits(int i) const {
  const int first = static_cast<int>(drafts_.tokens.size()) - forced_drafts_;
  if (i < first || forced_guessed_[i - first]) return false;
  if (params_.top_logprobs >= 0 || !params_.synthetic_acceptance.empty()) return false;
  const int32_t token = drafts_.tokens[i];
  for (const LogitBias& b : params_.sampling.logit_bias) {
    if (b.token == token && b.bias == -std::numeric_limits<float>::infinity()) return false;
  }
  return true;
}

void EngineSlot::OnForward(const ForwardOutput& out, int row0, int logit0, double forward_ms,
                           bool record_verify_time) {
  if (phase_ == SlotPhase::kPrefill) {
    OnPrefillRows(out, row0, logit0);
  } else if (phase_ == SlotPhase::kGenerate) {
    OnGenerateRows(out, row0, logit0, forward_ms, record_verify_time);
  }
}

void EngineSlot::OnPrefillRows(const ForwardOutput& out, int row0, int logit0) {
  prefill_pos_ += planned_prefill_;
  const int last_row = row0 + planned_prefill_ - 1;
  planned_prefill_ = 0;
  if (params_.on_prefill_progress) {
    const int from = result_.cached_prompt_tokens;
    params_.on_prefill_progress(prefill_pos_ - from, static_cast<int>(prompt_.size()) - from);
  }
  if (prefill_pos_ < static_cast<int>(prompt_.size())) return;
  result_.prompt_ms = MsSince(t_prompt_);
  t_gen_ = EngineClock::now();
  generating_started_ = true;
  phase_ = SlotPhase::kGenerate;
  hidden_.assign(out.Hidden(last_row), out.Hidden(last_row) + n_embd_);
  if (max_tokens_ == 0) {
    Stop(StopReason::kLength);
    return;
  }
  const float* logits = out.Logits(logit0);
  Emit(sampler_.Sample(Constrained(logits), n_vocab_, history_, rng_, probs_), logits);
}

void EngineSlot::OnGenerateRows(const ForwardOutput& out, int row0, int logit0, double forward_ms,
                                bool record_verify_time) {
  const int k = static_cast<int>(drafts_.tokens.size());
  SpeculationStats& stats = result_.spec;
  stats.verify_ms += forward_ms;
  if (record_verify_time) {
    planner_.RecordVerifyTime(k + 1, forward_ms);
    forced_runs_.RecordForward(forward_ms);
  }
  stats.probes = planner_.probes();  // this round's plan included
  stats.remeasures = planner_.remeasures();
  if (k == 0) {
    ++stats.plain_steps;
    stats.plain_ms += forward_ms;
    hidden_.assign(out.Hidden(row0), out.Hidden(row0) + n_embd_);
    const float* logits = out.Logits(logit0 + row_logits_[0]);
    Emit(sampler_.Sample(Constrained(logits), n_vocab_, history_, rng_, probs_), logits);
    if (drafter_ != nullptr) {
      const auto t0 = EngineClock::now();
      planner_.RecordPlainStep(history_);
      stats.plan_ms += MsSince(t0);
    }
    return;
  }
  // Verify: greedy accepts while the draft equals the target's choice;
  // sampling accepts with probability min(1, p/q) and otherwise resamples from the residual.
  // (A synthetic-acceptance benchmark request is not lossless: its drafts' lengths matter.)
  int accepted = 0;
  for (int i = 0; i <= k && phase_ == SlotPhase::kGenerate; ++i) {
    if (row_logits_[i] < 0) {
      // A grammar-forced draft (ForcedWithoutLogits): accepted, with the one random draw the
      // point-mass rule makes (so sampled output is the same as with the logits).
      if (!greedy_) rng_.Uniform();
      ++accepted;
      if (InRepetitionLoop(history_)) ++stats.repetition_accepted;
      Emit(drafts_.tokens[i], nullptr);
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
      token = match ? drafts_.tokens[i] : sampler_.Sample(logits, n_vocab_, history_, rng_, probs_);
    } else if (i < k && !greedy_) {
      sampler_.Distribution(logits, n_vocab_, history_, probs_);
      SpeculativeOutcome o =
          SpeculativeAccept(probs_, drafts_.q[i], drafts_.tokens[i], rng_, residual_);
      token = o.token;
      match = o.accepted;
    } else {
      token = sampler_.Sample(logits, n_vocab_, history_, rng_, probs_);
      match = i < k && token == drafts_.tokens[i];
    }
    if (match) {
      ++accepted;
      if (InRepetitionLoop(history_)) ++stats.repetition_accepted;
    }
    Emit(token, raw);
    if (!match) break;
  }
  // Grammar-forced drafts (the last forced_drafts_) are counted apart from the drafters'.
  const int k_drafter = k - forced_drafts_;
  if (forced_drafts_ > 0) {
    const auto guesses = stats.RecordForced(forced_guessed_, k_drafter, accepted);
    grammar_->RecordGuesses(guesses.reached, guesses.accepted);
  }
  if (k_drafter > 0)
    forced_runs_.RecordRound(std::min(accepted + 1, k_drafter), std::min(accepted, k_drafter));
  if (k_drafter > 0) {
    stats.RecordRound(k_drafter, std::min(accepted, k_drafter), drafts_.n_lookup,
                      planner_.planned_source() == DraftPlanner::kSuffix);
    const auto t0 = EngineClock::now();
    planner_.RecordRound(drafts_.n_lookup, k_drafter, std::min(accepted, k_drafter), history_);
    stats.plan_ms += MsSince(t0);
  } else {
    ++stats.rounds;
  }
  // The row that produced the last emitted token carries the hidden for the next draft; the
  // cache keeps [last, accepted drafts].
  hidden_.assign(out.Hidden(row0 + accepted), out.Hidden(row0 + accepted) + n_embd_);
  cache_.Truncate(seq_, step_pos_ + accepted + 1);
  drafts_.Clear();
  forced_drafts_ = 0;
  forced_guessed_.clear();
}

void EngineSlot::Emit(int32_t token, const float* raw_logits) {
  // Before Commit: the logprobs are those of the raw row, whatever the constraint masked.
  if (params_.top_logprobs >= 0) {
    ComputeLogprobs(raw_logits, n_vocab_, token, params_.top_logprobs, logprobs_);
  }
  if (grammar_) grammar_->Commit(token);
  history_.push_back(token);
  result_.tokens.push_back(token);
  ++result_.spec.generated;
  ++new_tokens_;
  bool keep = true;
  if (on_event_) {
    EngineEvent event;
    event.token = token;
    event.spec = &result_.spec;
    event.cached_prompt_tokens = result_.cached_prompt_tokens;
    if (params_.top_logprobs >= 0) event.logprobs = &logprobs_;
    keep = on_event_(event);
  }
  const std::vector<int32_t>& eog = params_.eog_tokens;
  if (std::find(eog.begin(), eog.end(), token) != eog.end()) {
    Stop(StopReason::kEog);
  } else if (!keep) {
    stopped_by_client_ = true;
    Stop(StopReason::kStopped);
  } else if (result_.spec.generated >= max_tokens_) {
    Stop(StopReason::kLength);
  } else if (static_cast<int>(history_.size()) >= cache_.n_ctx()) {
    Stop(StopReason::kContext);
  }
}

void EngineSlot::Stop(StopReason reason) {
  result_.stop_reason = reason;
  phase_ = SlotPhase::kDone;
}

void EngineSlot::Cancel(const std::string& error) {
  if (!active() || phase_ == SlotPhase::kDone) return;
  // Rows of an unfinished round are never left behind: cancellation happens between steps.
  error_ = error;
  Stop(StopReason::kCancelled);
}

void EngineSlot::Fail(const std::string& error) {
  if (!active()) return;
  error_ = error.empty() ? "internal error" : error;
  result_.stop_reason = StopReason::kError;
  phase_ = SlotPhase::kDone;
  cache_.Clear(seq_);
  history_.clear();
  prompt_.clear();
}

int EngineSlot::TakeNewTokens() {
  const int n = new_tokens_;
  new_tokens_ = 0;
  return n;
}

void EngineSlot::Conclude() {
  if (phase_ != SlotPhase::kDone) return;
  if (generating_started_) result_.generate_ms = MsSince(t_gen_);
  SpeculationStats& stats = result_.spec;
  stats.other_ms =
      std::max(0.0, result_.generate_ms - stats.plan_ms - stats.draft_ms - stats.verify_ms);
  // The cache holds every committed token but the last; a request
  // stopped mid-prefill holds the evaluated part of its prompt.
  cached_ = prompt_keys_;
  cached_.insert(cached_.end(), history_.begin() + std::min(history_.size(), prompt_keys_.size()),
                 history_.end());
  if (!cached_.empty()) cached_.pop_back();
  if (static_cast<int>(cached_.size()) > cache_.Length(seq_)) cached_.resize(cache_.Length(seq_));
  // Suffix drafting keeps the request's text (prompt and output) for the tenant's next ones; a
  // failed request (its history cleared) adds nothing.
  if (drafter_ != nullptr && planner_.suffix_on() && !history_.empty()) {
    drafter_->LearnRequest(params_.tenant, history_);
  }
}

void EngineSlot::Release() {
  if (phase_ != SlotPhase::kDone) return;
  if (on_event_) {
    EngineEvent event;
    event.final = true;
    event.result = &result_;
    event.error = error_;
    try {
      on_event_(event);
    } catch (...) {  // NOLINT: the request is over; a failing callback cannot change that
    }
  }
  phase_ = SlotPhase::kIdle;
  on_event_ = nullptr;
  drafter_ = nullptr;
  prompt_.clear();
  history_.clear();
  drafts_.Clear();
  grammar_.reset();
}

}  // namespace tandem
