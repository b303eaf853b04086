// The engine's inside, shared by the files that implement it (engine.cpp: the queue, the slots
// and the step; engine_warmup.cpp: the warm-up). Not for use outside src/engine.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "engine/engine_slot.h"
#include "model/forward_batch.h"

namespace tandem {

struct Engine::Impl {
  struct QueuedRequest {
    uint64_t id = 0;
    EngineRequest request;
  };

  // A slot's share of the merged batch.
  struct BatchPart {
    EngineSlot* slot = nullptr;
    int row0 = 0;               // its first batch row
    int n_rows = 0;             // its rows
    int logit0 = 0;             // its first logits row
    int32_t length_before = 0;  // its cache length before the forward
  };

  Impl(const TargetModel& target, DrafterSet drafters, ThreadPool& pool,
       const EngineOptions& options);

  void Run();
  // One step with its bookkeeping: the step, then finished slots released, live metrics.
  void StepAndRelease();
  // Admits `q` into the idle slot whose cache serves the longest prefix of its prompt (ties:
  // the least recently used slot, so other caches survive longer).
  void Admit(QueuedRequest q);
  // One continuous-batching step over the active slots.
  void Step();
  // Plans the generating slots' rows and drafts for them; `budget` is the rows left in this
  // step's batch. Who goes first rotates over the steps with a full budget (`rotate`), so every
  // slot regularly goes first, and the first always fits (1 + its draft cap <= max_batch).
  void PlanGenerating(int& budget, bool rotate, std::vector<EngineSlot*>& planned);
  // Counts the step's choices (EngineMetrics::spec_by_batch): each planned slot's drafts as it
  // will verify them, after drafting.
  void RecordBatchChoices(const std::vector<EngineSlot*>& planned);
  // Plans prompt chunks, oldest request first, at most `limit` rows per slot.
  void PlanPrefill(int& budget, int limit, std::vector<EngineSlot*>& planned);
  // Runs the merged forward and hands each slot its rows; if the merged forward fails, runs
  // each slot alone so only the slot at fault fails.
  void ForwardParts(const std::vector<BatchPart>& parts, bool record_verify_time);
  void Consume(EngineSlot* slot, int row0, int logit0, double ms, bool record_verify_time);
  void FailSlot(EngineSlot* slot, const std::string& error);
  // Sends the final event of requests that ended in the queue.
  void EndQueued(std::vector<QueuedRequest>& requests, const std::string& error);
  // Concludes every finished slot: metrics first, then the final event.
  void ReleaseDone();
  bool AnyActive() const;
  // EngineOptions::warmup; before the engine thread starts.
  void Warmup();
  void UpdateLiveMetrics(double step_seconds, bool generating);
  // Runs `task` on the engine's thread between steps (inline without one) and returns when it
  // ran; its exception is rethrown here. Error(kUnavailable) once shutting down.
  void RunBetweenSteps(std::function<void()> task);
  // The slot `slot` checked against [0, n_slots).
  EngineSlot& SlotAt(int slot);

  const TargetModel& target_;
  ThreadPool& pool_;
  EngineOptions options_;
  std::unique_ptr<KvCache> cache_;
  DrafterSet drafters_;
  std::vector<int32_t> suppress_;  // the target's tokenizer.ggml.suppress_tokens: never sampled

  // Engine thread only.
  std::vector<std::unique_ptr<EngineSlot>> slots_;
  uint64_t stamp_ = 0;
  std::vector<SlotMetrics> slot_finished_;  // per slot: what its finished requests add up to
  size_t rotation_ = 0;
  bool prefill_turn_ = false;  // prompts go first in the next step
  ForwardBatch batch_;
  ForwardOutput out_;

  // Guarded by mutex_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<QueuedRequest> queue_;
  std::vector<uint64_t> cancels_;
  std::vector<std::function<void()>> tasks_;  // RunBetweenSteps's, run by the engine thread
  uint64_t next_id_ = 1;
  int in_flight_ = 0;  // queued + in slots
  bool stopping_ = false;
  bool finish_running_ = true;
  EngineMetrics metrics_;

  std::thread thread_;
};

}  // namespace tandem
