// Single-sequence generation for `tandem run`, `bench` and the tests: a one-slot engine run on
// the caller's thread (Engine::RunHere), so its prefill, plain or speculative decoding (MTP
// assistant or draft model), timings and speculative statistics are the server's, row for row.
#pragma once

#include <functional>
#include <memory>
#include <span>

#include "engine/engine.h"
#include "engine/request.h"
#include "speculative/drafter_set.h"

namespace tandem {

class Generator {
 public:
  // `drafters` (any may be missing, e.g. MakeDrafters in speculative/loaded_drafters.h) serve
  // the speculation types. The generator owns a one-sequence KV cache. `warmup`:
  // EngineOptions::warmup.
  Generator(const TargetModel& target, DrafterSet drafters, ThreadPool& pool,
            const KvCacheOptions& kv_options, bool warmup = false);
  ~Generator();

  // Evaluates `prompt` (reusing the longest prefix still valid in the cache) and generates.
  // on_token is called once per emitted token, in order, except an EOG token that ends
  // generation; returning false stops generation. Throws Error(kInvalidArgument) for an empty
  // prompt, a prompt longer than the context, a token outside the vocabulary, a speculation
  // type whose drafter is not loaded, or bad sampling parameters; Error(kInternal) when
  // generation fails (the cache is then forgotten).
  GenerateResult Generate(std::span<const int32_t> prompt, const GenerateParams& params,
                          const std::function<bool(int32_t token)>& on_token);
  // The same with media rows in the prompt (EngineRequest::media).
  GenerateResult Generate(std::span<const int32_t> prompt, std::vector<PromptMedia> media,
                          const GenerateParams& params,
                          const std::function<bool(int32_t token)>& on_token);

  // Forgets the cached context.
  void Reset();
  const KvCache& cache() const;

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace tandem
