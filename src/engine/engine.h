// The serving engine: one thread owns the model, the KV cache of every slot and the assistant;
// requests from any thread are queued, admitted into slots, and advanced together by continuous
// batching — each step runs ONE target forward that merges the rows of every active slot
// (prefill chunks, decode rows, verification rows), after the assistant drafted for every slot.
//
// Contract shared by `tandem serve` (server/) and tests: results per request are identical to
// running it alone through Generator (batch invariance), whatever else the engine is doing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/request.h"
#include "kv/kv_cache.h"
#include "speculative/drafter_set.h"

namespace tandem {

class TargetModel;
class ThreadPool;

struct EngineOptions {
  int n_slots = 1;          // --parallel
  KvCacheOptions kv;        // n_seq is set to n_slots; n_ctx is per slot
  int max_queue = 64;       // queued requests beyond the busy slots; more are refused
  int prefill_chunk = 256;  // most prompt rows one slot adds to a step
  SpecOptions spec;         // default speculation; callers copy it into params.spec (then apply
                            // per-request overrides): the engine uses params.spec as given
  // false: no engine thread; the caller runs one request at a time with RunHere (Generator).
  bool own_thread = true;
  // Before the first request, a few short generations through slot 0 (plain, then drafting a
  // fixed length with each loaded drafter), then forgotten: the first request's forwards and
  // draft steps then cost what later ones do (weights paged in and cached, scratch allocated),
  // so its latency and the speculation planner's first measurements are not a cold start's.
  // Metrics and caches are as if it never ran.
  bool warmup = false;
  // The loaded target's identity (FileDigest of its file), written into saved slot files and
  // checked when one is restored.
  uint64_t model_digest = 0;
};

// One slot as GET /slots shows it.
struct SlotInfo {
  int id = 0;
  int n_ctx = 0;
  bool is_processing = false;
  uint64_t request_id = 0;  // the running request's, 0 when idle
  int n_cached = 0;         // positions the prompt cache holds (idle)
};

// What a slot save, restore or erase did. `busy`: refused, the slot runs a request (nothing done).
struct SlotActionResult {
  bool busy = false;
  int n_tokens = 0;    // positions saved, restored or erased
  size_t n_bytes = 0;  // bytes written or read
  double ms = 0;
};

// The `error` of requests a shutdown ended (queued, or running past the drain).
inline constexpr char kShuttingDownError[] = "shutting down";

// One slot's speculation: `spec` is cumulative over the requests it finished plus the one it is
// running (updated after every step), so a scrape shows drafting working slot by slot.
struct SlotMetrics {
  bool busy = false;
  bool speculating = false;  // the running request drafts (speculation on and its drafter loaded)
  int64_t requests = 0;      // requests this slot finished (any outcome)
  SpeculationStats spec;
};

// requests_started counts requests Submit accepted; each ends as exactly one of finished
// (eog/length/context), cancelled (Cancel, on_event false, shutdown) or failed, so started ==
// finished + cancelled + failed + queue_depth + busy_slots between steps. rejected counts Submit
// refusals for a full queue or a shutdown (invalid requests throw without being counted). Metrics
// are updated before a request's final event is sent.
struct EngineMetrics {
  int64_t requests_started = 0, requests_finished = 0, requests_cancelled = 0, requests_failed = 0,
          requests_rejected = 0;
  int64_t prompt_tokens = 0, cached_prompt_tokens = 0, generated_tokens = 0;
  int queue_depth = 0, busy_slots = 0, n_slots = 0;
  size_t kv_bytes = 0;
  int64_t kv_used_positions = 0, kv_capacity_positions = 0;
  SpeculationStats spec;           // cumulative over finished requests
  std::vector<SlotMetrics> slots;  // [n_slots]
  double generate_seconds = 0;     // engine-thread time spent in steps with generating slots
  // Speculation by batch size: for each count of generating slots in a step (the index), the
  // speculating slots' steps that verified drafts, those that decoded plainly, and the drafts
  // verified (grammar-forced ones included).
  struct BatchChoices {
    int64_t drafting = 0, plain = 0, drafted_tokens = 0;
  };
  std::vector<BatchChoices> spec_by_batch;
};

class Engine {
 public:
  // Starts the engine thread, the only user of `pool` from then on. `drafters` (any may be
  // missing) serve the speculation types (DrafterSet::For), each prepared for every slot.
  // Throws Error(kInvalidArgument) for bad options. params.spec of each request is used as
  // given.
  Engine(const TargetModel& target, DrafterSet drafters, ThreadPool& pool,
         const EngineOptions& options);
  ~Engine();  // Shutdown(false)
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Without an engine thread (options.own_thread false): validates the request as Submit does,
  // then runs it to the end on the calling thread; its events arrive on this thread.
  void RunHere(EngineRequest request);
  // Without an engine thread: forgets what every slot's cache holds.
  void ForgetCaches();
  // The target's KV cache of every slot.
  const KvCache& cache() const;

  // Thread-safe; run between steps on the engine's thread. Slot `slot` (in [0, n_slots), else
  // Error(kInvalidArgument)) must be idle, else the result says busy. Save writes the slot's
  // prompt cache to `path` (slot_file.h, atomic); Restore replaces it with the file's (refusing
  // another model, KV type or shape with Error(kInvalidArgument), a bad file with kCorrupt or
  // kNotFound); Erase forgets it. Error(kUnavailable) once shutting down.
  SlotActionResult SaveSlot(int slot, const std::string& path);
  SlotActionResult RestoreSlot(int slot, const std::string& path);
  SlotActionResult EraseSlot(int slot);
  // Thread-safe snapshot of every slot.
  std::vector<SlotInfo> Slots() const;

  // Thread-safe. Queues the request and returns its id. Throws Error(kInvalidArgument) for a
  // request that can never run (empty prompt, prompt longer than a slot's context, bad sampling
  // or speculation settings) and Error(kUnavailable, "queue full") when max_queue is reached (or
  // shutting down).
  uint64_t Submit(EngineRequest request);
  // Thread-safe. The request stops at the next step and gets its final event.
  void Cancel(uint64_t id);
  // Thread-safe snapshot.
  EngineMetrics Metrics() const;
  // Stops admitting; with finish = true lets running requests end, else cancels them; joins.
  // Queued requests get a final event with error "shutting down", and so do running ones it
  // cancels. Called from on_event it only sets the flags; a later call (or ~Engine) joins.
  void Shutdown(bool finish);
  // Thread-safe, returns at once: Shutdown(true) without the join. Queued requests end (error
  // kShuttingDownError), running ones go on, Submit refuses; a later Shutdown joins.
  void StopAdmitting();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tandem
