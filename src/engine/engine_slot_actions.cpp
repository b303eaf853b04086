// The engine's slot actions (llama-server's /slots): save a slot's cache to a file, restore it,
// erase it, and list the slots. Each runs between two engine steps (RunBetweenSteps), never
// inside one, and only on a slot that serves no request.
#include <condition_variable>
#include <exception>
#include <mutex>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/engine_impl.h"
#include "engine/slot_file.h"

namespace tandem {

void Engine::Impl::RunBetweenSteps(std::function<void()> task) {
  std::exception_ptr error;
  auto run = [&] {
    try {
      task();
    } catch (...) {
      error = std::current_exception();
    }
  };
  if (!options_.own_thread) {
    run();
  } else {
    std::mutex done_mutex;
    std::condition_variable done_cv;
    bool done = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) Fail(ErrorKind::kUnavailable, "the engine is shutting down");
      tasks_.push_back([&] {
        run();
        std::lock_guard<std::mutex> done_lock(done_mutex);
        done = true;
        done_cv.notify_one();
      });
      wake_.notify_one();
    }
    std::unique_lock<std::mutex> done_lock(done_mutex);
    done_cv.wait(done_lock, [&] { return done; });
  }
  if (error) std::rethrow_exception(error);
}

EngineSlot& Engine::Impl::SlotAt(int slot) {
  if (slot < 0 || slot >= static_cast<int>(slots_.size())) {
    Fail(ErrorKind::kInvalidArgument, "id_slot " + std::to_string(slot) + " is not in [0, " +
                                          std::to_string(slots_.size()) + ")");
  }
  return *slots_[slot];
}

SlotActionResult Engine::SaveSlot(int slot, const std::string& path) {
  Impl& m = *impl_;
  SlotActionResult result;
  const auto t0 = EngineClock::now();
  // Only the copy out of the cache runs between steps; the write does not hold the engine.
  SlotImage image;
  m.RunBetweenSteps([&] {
    EngineSlot& s = m.SlotAt(slot);
    if (s.active()) {
      result.busy = true;
      return;
    }
    image = CaptureSlot(*m.cache_, s.seq(), s.cached_keys(), m.options_.model_digest);
  });
  if (result.busy) return result;
  result.n_bytes = WriteSlotFile(path, image);
  result.n_tokens = image.n_positions();
  result.ms = MsSince(t0);
  return result;
}

SlotActionResult Engine::RestoreSlot(int slot, const std::string& path) {
  Impl& m = *impl_;
  SlotActionResult result;
  // Read and check off the engine thread; only the copy into the cache runs between steps.
  const auto t0 = EngineClock::now();
  size_t n_read = 0;
  const SlotImage image = ReadSlotFile(path, &n_read);
  CheckSlotImage(image, *m.cache_, m.options_.model_digest, path);
  m.RunBetweenSteps([&] {
    EngineSlot& s = m.SlotAt(slot);
    if (s.active()) {
      result.busy = true;
      return;
    }
    s.Forget();
    tandem::RestoreSlot(image, *m.cache_, s.seq());
    s.AdoptCached(image.keys);
    result.n_tokens = image.n_positions();
    result.n_bytes = n_read;
  });
  result.ms = MsSince(t0);
  return result;
}

SlotActionResult Engine::EraseSlot(int slot) {
  Impl& m = *impl_;
  SlotActionResult result;
  m.RunBetweenSteps([&] {
    EngineSlot& s = m.SlotAt(slot);
    if (s.active()) {
      result.busy = true;
      return;
    }
    result.n_tokens = static_cast<int>(s.cached_keys().size());
    s.Forget();
  });
  return result;
}

std::vector<SlotInfo> Engine::Slots() const {
  Impl& m = *impl_;
  std::vector<SlotInfo> infos;
  m.RunBetweenSteps([&] {
    for (const auto& s : m.slots_) {
      SlotInfo info;
      info.id = s->seq();
      info.n_ctx = m.options_.kv.n_ctx;
      info.is_processing = s->active();
      info.request_id = s->active() ? s->request_id() : 0;
      info.n_cached = static_cast<int>(s->cached_keys().size());
      infos.push_back(info);
    }
  });
  return infos;
}

}  // namespace tandem
