// Single-sequence generation: prefill, then plain or speculative decoding (MTP assistant), with
// timings and honest speculative statistics. `tandem run` and the tests drive it; the server's
// engine batches several of these loops together.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_cache.h"
#include "model/gemma4_assistant.h"
#include "model/gemma4_model.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "sampling/sampling_params.h"
#include "speculative/draft_length_controller.h"
#include "speculative/drafter.h"
#include "speculative/spec_options.h"
#include "speculative/spec_stats.h"

namespace tandem {

struct GenerateParams {
  int n_predict = 128;  // tokens to generate at most (-1: until EOG or context end)
  SamplingParams sampling;
  SpecOptions spec;                 // type kNone: plain decoding
  std::vector<int32_t> eog_tokens;  // generation stops after emitting one of these
  // Benchmarks only (`tandem bench --synthetic-acceptance`): draft position i is accepted with
  // probability rate[min(i, size - 1)] instead of by verification, so the mechanism's cost can
  // be measured at a chosen acceptance. The emitted text is then meaningless.
  std::vector<float> synthetic_acceptance;
  // Called after each prefill chunk with (prompt tokens evaluated, prompt tokens to evaluate).
  std::function<void(int done, int total)> on_prefill_progress;
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated, EOG included if one stopped generation
  std::string stop_reason;      // "eog", "length", "stopped" (callback), "context"
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;  // reused from the previous call's cache
  double prompt_ms = 0;
  double generate_ms = 0;
  SpecStats spec;
};

class Generator {
 public:
  // `assistant` may be null (no MTP). The generator owns a one-sequence KV cache.
  // `draft_model` (may be null) serves --spec-type draft with its own cache.
  Generator(const Gemma4Model& target, const Gemma4Assistant* assistant, ThreadPool& pool,
            const KvCacheOptions& kv_options, const Gemma4Model* draft_model = nullptr);
  ~Generator();

  // Evaluates `prompt` (reusing the longest prefix still valid in the cache) and generates.
  // on_token is called once per emitted token, in order; returning false stops generation.
  // Throws Error(kInvalidArgument) for an empty prompt, a prompt longer than the context, a
  // speculation type that cannot run, or bad sampling parameters.
  GenerateResult Generate(std::span<const int32_t> prompt, const GenerateParams& params,
                          const std::function<bool(int32_t token)>& on_token);

  // Forgets the cached context.
  void Reset();
  const KvCache& cache() const { return *cache_; }

 private:
  // Evaluates tokens [from, to) of `tokens` at positions from.., logits for the last row only.
  void Prefill(std::span<const int32_t> tokens, int from, ForwardOutput& out,
               const std::function<void(int, int)>& progress);

  const Gemma4Model& target_;
  const Gemma4Assistant* assistant_;
  ThreadPool& pool_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<Drafter> mtp_drafter_;
  std::unique_ptr<Drafter> model_drafter_;
  std::vector<int32_t> cached_;  // tokens whose K/V the cache holds, in order
};

}  // namespace tandem
