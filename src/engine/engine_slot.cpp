// One serving slot's request: prompt-cache reuse, prefill progress, emitting and stopping, driven
// one step at a time by the engine; its speculation is its SpeculativeRound's.
#include "engine/engine_slot.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "engine/prompt_media.h"
#include "speculative/drafter_registry.h"

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
  params_ = std::move(request.params);
  on_event_ = std::move(request.on_event);
  sampler_ = Sampler(params_.sampling);
  const uint64_t seed = ResolveSeed(params_.sampling.seed);
  rng_ = Rng(seed, 0);
  const bool continued =
      round_.Start(drafter,
                   RoundParams{.spec = params_.spec,
                               .sampling = params_.sampling,
                               .synthetic_acceptance = params_.synthetic_acceptance,
                               .wants_logprobs = params_.top_logprobs >= 0,
                               .limit_constrained_logits = params_.limit_constrained_logits,
                               .tenant = params_.tenant},
                   params_.grammar, seed, n_vocab_, draft_max_limit, target_bytes_per_token);
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

int EngineSlot::PlanRound(int budget, int n_generating) {
  const int64_t pos = static_cast<int64_t>(history_.size()) - 1;
  const int64_t remaining = max_tokens_ - result_.spec.generated;
  const int64_t row_room = std::min<int64_t>(cache_.n_ctx() - pos - 1, cache_.max_batch() - 1);
  const int64_t room = std::min<int64_t>(remaining - 1, row_room);
  return round_.PlanRound(room, budget, n_generating, history_, result_.spec, row_room);
}

DraftRequest EngineSlot::MakeDraftRequest() {
  return round_.MakeDraftRequest(
      CommittedState{history_.back(), static_cast<int32_t>(history_.size()) - 1, seq_,
                     hidden_.data(), &history_},
      &sampler_);
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
                last ? round_.PromptLogitTokens(result_.spec) : std::vector<int32_t>{});
    }
    return end == n_prompt ? 1 : 0;
  }
  step_pos_ = static_cast<int32_t>(history_.size()) - 1;
  return round_.AddRows(batch,
                        CommittedState{history_.back(), step_pos_, seq_, hidden_.data(), &history_},
                        result_.spec);
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
  Emit(sampler_.Sample(round_.Constrained(logits), n_vocab_, history_, rng_, probs_), logits);
}

void EngineSlot::OnGenerateRows(const ForwardOutput& out, int row0, int logit0, double forward_ms,
                                bool record_verify_time) {
  const bool verified = round_.drafted() > 0;
  const int accepted =
      round_.OnRows(out, logit0, forward_ms, record_verify_time, history_, sampler_, rng_, probs_,
                    result_.spec, [this](int32_t token, const float* raw_logits) {
                      Emit(token, raw_logits);
                      return phase_ == SlotPhase::kGenerate;
                    });
  // The row that produced the last emitted token carries the hidden for the next draft; the
  // cache keeps [last, accepted drafts], a tree's accepted path moved to follow `last`.
  const std::vector<int>& kept = round_.kept_rows();
  const int last_row = row0 + (kept.empty() ? 0 : kept.back());
  hidden_.assign(out.Hidden(last_row), out.Hidden(last_row) + n_embd_);
  for (size_t j = 0; j < kept.size(); ++j) {
    const int32_t to = step_pos_ + 1 + static_cast<int32_t>(j);
    if (step_pos_ + kept[j] != to) cache_.CopyPosition(seq_, step_pos_ + kept[j], to);
  }
  if (verified) cache_.Truncate(seq_, step_pos_ + accepted + 1);
}

void EngineSlot::Emit(int32_t token, const float* raw_logits) {
  // Before Commit: the logprobs are those of the raw row, whatever the constraint masked.
  if (params_.top_logprobs >= 0) {
    ComputeLogprobs(raw_logits, n_vocab_, token, params_.top_logprobs, logprobs_);
  }
  round_.Commit(token);
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
  if (round_.LearnsSuffixes() && !history_.empty()) {
    round_.drafter()->LearnRequest(params_.tenant, history_);
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
  round_.End();
  prompt_.clear();
  history_.clear();
}

}  // namespace tandem
