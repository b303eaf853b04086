#include "engine/generator.h"

#include <algorithm>
#include <vector>

#include "base/error.h"

namespace tandem {

Generator::Generator(const TargetModel& target, DrafterSet drafters, ThreadPool& pool,
                     const KvCacheOptions& kv_options, bool warmup) {
  EngineOptions options;
  options.n_slots = 1;
  options.kv = kv_options;
  options.max_queue = 0;
  options.prefill_chunk = std::max(1, kv_options.max_batch);
  options.own_thread = false;
  options.warmup = warmup;
  engine_ = std::make_unique<Engine>(target, std::move(drafters), pool, options);
}

Generator::~Generator() = default;

void Generator::Reset() {
  engine_->ForgetCaches();
}

const KvCache& Generator::cache() const {
  return engine_->cache();
}

GenerateResult Generator::Generate(std::span<const int32_t> prompt, const GenerateParams& params,
                                   const std::function<bool(int32_t)>& on_token) {
  return Generate(prompt, {}, params, on_token);
}

GenerateResult Generator::Generate(std::span<const int32_t> prompt, std::vector<PromptMedia> media,
                                   const GenerateParams& params,
                                   const std::function<bool(int32_t)>& on_token) {
  GenerateResult result;
  std::string error;
  EngineRequest request;
  request.prompt.assign(prompt.begin(), prompt.end());
  request.media = std::move(media);
  request.params = params;
  request.on_event = [&](const EngineEvent& e) {
    if (e.final) {
      if (e.result != nullptr) result = *e.result;
      error = e.error;
      return true;
    }
    const std::vector<int32_t>& eog = params.eog_tokens;
    if (std::find(eog.begin(), eog.end(), e.token) != eog.end()) return true;
    return on_token ? on_token(e.token) : true;
  };
  engine_->RunHere(std::move(request));
  if (result.stop_reason == StopReason::kError) Fail(ErrorKind::kInternal, error);
  return result;
}

}  // namespace tandem
