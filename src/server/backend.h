// What the server needs of the engine: submit, cancel, metrics. Engine in production
// (EngineBackend); tests substitute a scripted backend to drive the HTTP layer without a model.
#pragma once

#include <cstdint>

#include "engine/engine.h"

namespace tandem::server {

class Backend {
 public:
  virtual ~Backend() = default;
  // Engine::Submit's contract: thread-safe, returns an id; events arrive on another thread, one
  // per token then a final one. Throws Error(kInvalidArgument) for a request that can never run
  // and Error(kUnavailable) when the queue is full or the engine is stopping.
  virtual uint64_t Submit(EngineRequest request) = 0;
  // The request stops at the next step and still gets its final event. Unknown ids are ignored.
  virtual void Cancel(uint64_t id) = 0;
  virtual EngineMetrics Metrics() const = 0;
};

// Forwards to an Engine the caller owns (it must outlive this object).
class EngineBackend final : public Backend {
 public:
  explicit EngineBackend(Engine& engine) : engine_(engine) {}
  uint64_t Submit(EngineRequest request) override { return engine_.Submit(std::move(request)); }
  void Cancel(uint64_t id) override { engine_.Cancel(id); }
  EngineMetrics Metrics() const override { return engine_.Metrics(); }

 private:
  Engine& engine_;
};

}  // namespace tandem::server
