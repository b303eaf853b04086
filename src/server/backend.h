// What the server needs of the engine: submit, cancel, metrics. Engine in production
// (EngineBackend); tests substitute a scripted backend to drive the HTTP layer without a model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

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
  // Engine's saved-slot calls (same contracts); a backend without slots refuses them.
  virtual SlotActionResult SaveSlot(int slot, const std::string& path) {
    (void)slot, (void)path;
    return Unsupported();
  }
  virtual SlotActionResult RestoreSlot(int slot, const std::string& path) {
    (void)slot, (void)path;
    return Unsupported();
  }
  virtual SlotActionResult EraseSlot(int slot) {
    (void)slot;
    return Unsupported();
  }
  virtual std::vector<SlotInfo> Slots() const { return {}; }

 private:
  static SlotActionResult Unsupported() {
    Fail(ErrorKind::kUnsupported, "this backend has no slots to save, restore or erase");
  }
};

// Forwards to an Engine the caller owns (it must outlive this object).
class EngineBackend final : public Backend {
 public:
  explicit EngineBackend(Engine& engine) : engine_(engine) {}
  uint64_t Submit(EngineRequest request) override { return engine_.Submit(std::move(request)); }
  void Cancel(uint64_t id) override { engine_.Cancel(id); }
  EngineMetrics Metrics() const override { return engine_.Metrics(); }
  SlotActionResult SaveSlot(int slot, const std::string& path) override {
    return engine_.SaveSlot(slot, path);
  }
  SlotActionResult RestoreSlot(int slot, const std::string& path) override {
    return engine_.RestoreSlot(slot, path);
  }
  SlotActionResult EraseSlot(int slot) override { return engine_.EraseSlot(slot); }
  std::vector<SlotInfo> Slots() const override { return engine_.Slots(); }

 private:
  Engine& engine_;
};

}  // namespace tandem::server
