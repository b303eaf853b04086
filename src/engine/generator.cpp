#include "engine/generator.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "base/error.h"
#include "base/thread_pool.h"
#include "speculative/draft_model_drafter.h"
#include "speculative/mtp_drafter.h"
#include "speculative/speculative_accept.h"

namespace tandem {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

Generator::Generator(const Gemma4Model& target, const Gemma4Assistant* assistant, ThreadPool& pool,
                     const KvCacheOptions& kv_options, const Gemma4Model* draft_model)
    : target_(target), assistant_(assistant), pool_(pool) {
  KvCacheOptions options = kv_options;
  options.n_seq = 1;
  cache_ = target.NewKvCache(options);
  if (assistant_ != nullptr) mtp_drafter_ = std::make_unique<MtpDrafter>(*assistant_, pool_);
  if (draft_model != nullptr) {
    model_drafter_ = std::make_unique<DraftModelDrafter>(*draft_model, target, options, pool_);
  }
}

Generator::~Generator() = default;

void Generator::Reset() {
  cache_->Clear(0);
  cached_.clear();
}

void Generator::Prefill(std::span<const int32_t> tokens, int from, ForwardOutput& out,
                        const std::function<void(int, int)>& progress) {
  const int n = static_cast<int>(tokens.size());
  ForwardBatch batch;
  for (int start = from; start < n; start += cache_->max_batch()) {
    const int end = std::min(n, start + cache_->max_batch());
    batch.Clear();
    for (int i = start; i < end; ++i) batch.Add(tokens[i], i, 0, i == n - 1);
    target_.Forward(batch, *cache_, out, pool_);
    if (progress) progress(end - from, n - from);
  }
}

GenerateResult Generator::Generate(std::span<const int32_t> prompt, const GenerateParams& params,
                                   const std::function<bool(int32_t)>& on_token) {
  const int n_prompt = static_cast<int>(prompt.size());
  if (n_prompt == 0) Fail(ErrorKind::kInvalidArgument, "the prompt is empty");
  if (n_prompt >= cache_->n_ctx()) {
    Fail(ErrorKind::kInvalidArgument, "the prompt has " + std::to_string(n_prompt) +
                                          " tokens, which does not fit a context of " +
                                          std::to_string(cache_->n_ctx()));
  }
  ValidateSamplingParams(params.sampling);
  const SpecOptions& so = params.spec;
  Drafter* drafter = nullptr;
  if (so.type == SpecType::kMtp) {
    if (mtp_drafter_ == nullptr) {
      Fail(ErrorKind::kInvalidArgument, "MTP speculation asked for, but no assistant is loaded");
    }
    drafter = mtp_drafter_.get();
  } else if (so.type == SpecType::kDraft) {
    if (model_drafter_ == nullptr) {
      Fail(ErrorKind::kInvalidArgument, "draft-model speculation asked for, but none is loaded");
    }
    drafter = model_drafter_.get();
  }
  if (so.draft_max < 0 || so.draft_min < 0 || so.draft_min > so.draft_max) {
    Fail(ErrorKind::kInvalidArgument, "draft lengths must satisfy 0 <= draft-min <= draft-max");
  }
  if (!(so.draft_p_min >= 0.0f && so.draft_p_min <= 1.0f)) {
    Fail(ErrorKind::kInvalidArgument, "draft-p-min must be in [0, 1]");
  }

  GenerateResult result;
  result.prompt_tokens = n_prompt;
  Sampler sampler(params.sampling);
  const uint32_t seed = ResolveSeed(params.sampling.seed);
  Rng rng(seed, 0), draft_rng(seed, 1), synthetic_rng(seed, 2);
  const bool greedy = params.sampling.greedy();

  // Reuse the longest cached prefix the cache can still serve; at least one prompt token is
  // evaluated, for its logits.
  size_t common = 0;
  while (common < cached_.size() && common + 1 < prompt.size() &&
         cached_[common] == prompt[common]) {
    ++common;
  }
  if (common > 0 && cache_->CanTruncateTo(0, static_cast<int32_t>(common))) {
    cache_->Truncate(0, static_cast<int32_t>(common));
  } else {
    common = 0;
    cache_->Clear(0);
  }
  result.cached_prompt_tokens = static_cast<int>(common);

  auto t_prompt = Clock::now();
  ForwardOutput out;
  Prefill(prompt, static_cast<int>(common), out, params.on_prefill_progress);
  result.prompt_ms = MsSince(t_prompt);

  const int B = target_.config().n_embd, V = target_.config().n_vocab;
  std::vector<int32_t> history(prompt.begin(), prompt.end());
  std::vector<float> hidden(out.Hidden(out.logit_rows[0]), out.Hidden(out.logit_rows[0]) + B);
  std::vector<float> probs(V), residual(V);
  SpecStats& stats = result.spec;
  DraftLengthController controller(drafter ? so.draft_max : 0, so.adaptive);
  // Sampled output depends on the draft lengths, so they must not depend on measured times.
  if (drafter != nullptr && !greedy) {
    controller.UseStaticCosts(drafter->BytesPerStep() / target_.BytesPerToken());
  }
  const int64_t max_tokens =
      params.n_predict < 0 ? std::numeric_limits<int64_t>::max() : params.n_predict;

  auto t_gen = Clock::now();
  bool stop = false;
  // Emits one token; sets `stop` (and the reason) when generation must end after it.
  auto emit = [&](int32_t token) {
    history.push_back(token);
    result.tokens.push_back(token);
    ++stats.generated;
    if (std::find(params.eog_tokens.begin(), params.eog_tokens.end(), token) !=
        params.eog_tokens.end()) {
      result.stop_reason = "eog";
      stop = true;
    } else if (on_token && !on_token(token)) {
      result.stop_reason = "stopped";
      stop = true;
    } else if (stats.generated >= max_tokens) {
      result.stop_reason = "length";
      stop = true;
    } else if (static_cast<int>(history.size()) >= cache_->n_ctx()) {
      result.stop_reason = "context";
      stop = true;
    }
  };
  if (max_tokens == 0) {
    result.stop_reason = "length";
    stop = true;
  } else {
    emit(sampler.Sample(out.Logits(0), V, history, rng, probs));
  }

  DraftResult drafts;
  ForwardBatch batch;
  while (!stop) {
    const int32_t pos = static_cast<int32_t>(history.size()) - 1;  // position of the last token
    const int32_t last = history.back();
    int n_draft = 0;
    if (drafter != nullptr) {
      const int64_t remaining = max_tokens - stats.generated;
      const int64_t cap = std::min<int64_t>(
          {remaining - 1, cache_->n_ctx() - pos - 1, cache_->max_batch() - 1, so.draft_max});
      n_draft = controller.Choose(static_cast<int>(std::max<int64_t>(0, cap)));
    }
    drafts.Clear();
    if (n_draft > 0) {
      auto t_draft = Clock::now();
      DraftRequest request;
      request.last = last;
      request.pos = pos;
      request.seq = 0;
      request.hidden = hidden.data();
      request.history = history;
      request.n_max = n_draft;
      request.n_min = so.draft_min;
      request.p_min = so.draft_p_min;
      request.sampler = greedy ? nullptr : &sampler;
      request.rng = &draft_rng;
      drafter->Draft(request, *cache_, drafts);
      const double ms = MsSince(t_draft);
      stats.draft_ms += ms;
      controller.RecordDraftTime(drafts.steps, ms);
    }
    const int k = static_cast<int>(drafts.tokens.size());

    batch.Clear();
    batch.Add(last, pos, 0, true);
    for (int i = 0; i < k; ++i) batch.Add(drafts.tokens[i], pos + 1 + i, 0, true);
    auto t_verify = Clock::now();
    target_.Forward(batch, *cache_, out, pool_);
    const double verify_ms = MsSince(t_verify);
    stats.verify_ms += verify_ms;
    controller.RecordVerifyTime(k + 1, verify_ms);

    if (k == 0) {
      ++stats.plain_steps;
      stats.plain_ms += verify_ms;
      hidden.assign(out.Hidden(0), out.Hidden(0) + B);
      emit(sampler.Sample(out.Logits(0), V, history, rng, probs));
      continue;
    }
    // Verify: greedy accepts while the draft equals the target's choice; sampling accepts with
    // probability min(1, p/q) and otherwise resamples from the residual (lossless either way).
    int accepted = 0;
    for (int i = 0; i <= k && !stop; ++i) {
      int32_t token;
      bool match = false;
      if (i < k && !params.synthetic_acceptance.empty()) {
        const auto& rates = params.synthetic_acceptance;
        match = synthetic_rng.Uniform() < rates[std::min<size_t>(i, rates.size() - 1)];
        token = match ? drafts.tokens[i] : sampler.Sample(out.Logits(i), V, history, rng, probs);
      } else if (i < k && !greedy) {
        sampler.Distribution(out.Logits(i), V, history, probs);
        SpeculativeOutcome o =
            SpeculativeAccept(probs, drafts.q[i], drafts.tokens[i], rng, residual);
        token = o.token;
        match = o.accepted;
      } else {
        token = sampler.Sample(out.Logits(i), V, history, rng, probs);
        match = i < k && token == drafts.tokens[i];
      }
      if (match) {
        ++accepted;
        if (InRepetitionLoop(history)) ++stats.repetition_accepted;
      }
      emit(token);
      if (!match) break;
    }
    stats.RecordRound(k, accepted);
    controller.RecordRound(k, accepted);
    // The row that produced the last emitted token carries the hidden for the next draft; the
    // cache keeps [last, accepted drafts].
    hidden.assign(out.Hidden(accepted), out.Hidden(accepted) + B);
    cache_->Truncate(0, pos + accepted + 1);
  }
  result.generate_ms = MsSince(t_gen);
  stats.other_ms = std::max(0.0, result.generate_ms - stats.draft_ms - stats.verify_ms);
  cached_.assign(history.begin(), history.end() - 1);
  if (static_cast<int>(cached_.size()) > cache_->Length(0)) cached_.resize(cache_->Length(0));
  return result;
}

}  // namespace tandem
