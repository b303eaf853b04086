// EngineOptions::warmup: a few short generations through slot 0 before the first request, then
// forgotten.
#include "engine/engine_impl.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "model/target_model.h"
#include "speculative/drafter_registry.h"

namespace tandem {

void Engine::Impl::Warmup() {
  if (options_.kv.n_ctx < 32) return;  // room for its prompt, tokens and drafts
  const auto t0 = EngineClock::now();
  const EngineMetrics metrics = metrics_;
  const std::vector<SlotMetrics> finished = slot_finished_;
  const uint64_t next_id = next_id_;
  // A drafter's fixed-length rounds run its steps and multi-row verification: each loaded
  // drafter whose registry entry asks for a warm-up, once per model (DrafterEntry::warmed_by).
  std::vector<SpecType> types = {SpecType::kNone};
  for (const SpecType type : DrafterTypes()) {
    const DrafterEntry& entry = DrafterEntryOf(type);
    if (!entry.warm_up || drafters_.For(type) == nullptr) continue;
    if (drafters_.For(entry.warmed_by) != nullptr) continue;
    types.push_back(type);
  }
  const int32_t n_vocab = static_cast<int32_t>(target_.n_vocab());
  for (SpecType type : types) {
    QueuedRequest q;
    q.id = next_id_++;
    ++in_flight_;  // ReleaseDone counts it out
    for (int32_t i = 0; i < 4; ++i) q.request.prompt.push_back((2 + i) % n_vocab);
    q.request.params.n_predict = 6;
    q.request.params.spec.type = type;
    q.request.params.spec.adaptive = false;
    q.request.params.spec.draft_max = std::min(3, std::max(1, options_.kv.max_batch - 1));
    std::string error;
    q.request.on_event = [&error](const EngineEvent& e) {
      if (e.final) error = e.error;
      return true;
    };
    Admit(std::move(q));
    ReleaseDone();
    while (AnyActive()) StepAndRelease();
    if (!error.empty()) Fail(ErrorKind::kInternal, "engine warm-up failed: " + error);
  }
  for (auto& slot : slots_) slot->Forget();
  metrics_ = metrics;
  slot_finished_ = finished;
  next_id_ = next_id;
  LogInfo("engine warm-up: " + std::to_string(static_cast<int>(MsSince(t0))) + " ms");
}

}  // namespace tandem
