// One serving slot: a KV-cache sequence, the tokens it holds for the prompt cache, and the request
// running in it. Each step the engine asks the slot for its rows (after its drafter drafted),
// runs the merged forward, and hands the slot its output rows; the slot's SpeculativeRound
// (src/speculative) decides the round's drafts and verifies them, the slot emits, stops and keeps
// the cache. This is the only decoding loop: Generator is a one-slot engine (Engine::RunHere), so
// `tandem run`, `bench` and `tandem serve` share it.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/stopwatch.h"
#include "engine/request.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "speculative/drafter.h"
#include "speculative/speculative_round.h"

namespace tandem {

using EngineClock = SteadyClock;

enum class SlotPhase {
  kIdle,      // no request; cached_ describes what the cache holds
  kPrefill,   // evaluating the prompt, chunk by chunk
  kGenerate,  // one decode row or one verification round per step
  kDone,      // stopped (or failed); waits for Conclude() and Release()
};

// Checks a request before it is queued: throws Error(kInvalidArgument) for an empty prompt, a
// prompt that does not fit n_ctx (it needs room for at least one generated token), a token or
// logit-bias id outside [0, n_vocab), bad sampling parameters, bad draft limits, a grammar whose
// stop tokens are not all end-of-generation tokens, a thinking budget without thought tokens,
// top_logprobs above kMaxTopLogprobs, or speculation whose drafter is not loaded
// (`has_drafter`: one is loaded for request.params.spec.type).
void ValidateEngineRequest(const EngineRequest& request, int n_vocab, int n_ctx, bool has_drafter);

class EngineSlot {
 public:
  // `seq` is this slot's sequence in `cache`; n_vocab and n_embd are the target's;
  // media_both_ways: the target's image rows attend both ways (TargetModel::MediaBidirectional).
  EngineSlot(int seq, KvCache& cache, int n_vocab, int n_embd, bool media_both_ways = false);

  int seq() const { return seq_; }
  SlotPhase phase() const { return phase_; }
  bool active() const { return phase_ != SlotPhase::kIdle; }
  uint64_t request_id() const { return id_; }
  uint64_t last_used() const { return last_used_; }  // stamp given to the last Start()

  // How many leading tokens of `prompt` this slot's cache could serve: the common prefix with
  // what it holds, leaving at least one prompt token to evaluate, and 0 when truncating to it
  // would break a sliding window (KvCache::CanTruncateTo). Only meaningful while idle.
  // Media rows count by their content key (PromptKeys), and a prefix never ends inside an image.
  int ReusablePrefix(const EngineRequest& request) const;

  // Starts a validated request: keeps ReusablePrefix(prompt) cached positions (clears the rest)
  // and creates its Sampler, Rng streams and draft planner (sampled requests use the
  // static cost model: drafter->BytesPerStep() / target_bytes_per_token). `drafter` (null: no
  // speculation) serves request.params.spec.type. `draft_max_limit` caps the controller (the
  // verification rows of a round never exceed it anyway).
  void Start(uint64_t id, EngineRequest request, uint64_t stamp, int draft_max_limit,
             Drafter* drafter, double target_bytes_per_token);
  // Idle only: forgets what the cache holds.
  void Forget();
  // Idle: the PromptKeys of the positions the cache holds, in order (a saved slot's keys).
  const std::vector<uint64_t>& cached_keys() const { return cached_; }
  // Idle only: the cache now holds these positions (a restored slot, its rows already written).
  void AdoptCached(std::vector<uint64_t> keys) { cached_ = std::move(keys); }

  // --- Planning a step ---
  int PrefillRemaining() const { return static_cast<int>(prompt_.size()) - prefill_pos_; }
  bool speculating() const { return round_.speculating(); }
  Drafter* drafter() const { return round_.drafter(); }  // the running request's drafter, or null
  // This round's drafts within `budget` rows of the step (SpeculativeRound::PlanRound, with
  // the room the request's remaining tokens, the context and the per-call batch limit leave):
  // their number, or -1 when the request waits for a later step.
  int PlanRound(int budget, int n_generating);
  // Whether the planned drafts are the drafter's to make: then MakeDraftRequest, and SetDrafts
  // with what it drafted.
  bool NeedsDrafter() const { return round_.NeedsDrafter(); }
  DraftRequest MakeDraftRequest();
  void SetDrafts(DraftResult drafts, double ms) {
    round_.SetDrafts(std::move(drafts), ms, result_.spec);
  }
  // The drafts this step's rows will verify (after PlanRound, and SetDrafts where it drafted).
  int drafted() const { return round_.drafted(); }
  // Sets the number of prompt rows this step evaluates (prefill phase).
  // Plans at most n_rows prompt rows for this step and returns how many: fewer if they would end
  // inside an image whose rows attend both ways, or, when such an image starts the chunk, all of
  // it if it fits `room` rows (else none this step).
  int PlanPrefill(int n_rows, int room);
  // Runs one piece of the encoding of the next prompt media item whose rows are not made yet
  // (PromptMedia::job), timed into media_encode_ms; false when there is none. A failed job fails
  // the request.
  bool AdvanceMedia(ThreadPool& pool);

  // Appends this step's rows to `batch`: the planned prompt chunk (logits only for the last
  // prompt row) or [last, drafts...] (with logits, but for the rows that verify a grammar-forced
  // draft: see SpeculativeRound::ForcedWithoutLogits). Returns how many rows carry logits.
  int AddRows(ForwardBatch& batch);
  // Consumes this slot's rows of a forward: its first row is batch row `row0`, its first logits
  // row is `logit0`. Samples, verifies, emits token events, rolls back rejected drafts.
  // `forward_ms` is the forward's wall time; `record_verify_time` feeds it to the controller.
  // May throw (sampler, on_event): the caller then calls Fail().
  void OnForward(const ForwardOutput& out, int row0, int logit0, double forward_ms,
                 bool record_verify_time);

  // Ends the request at once: StopReason::kCancelled, and `error` if not empty.
  void Cancel(const std::string& error);
  // Ends the request with an error; forgets the cache (it may hold rows nobody committed).
  void Fail(const std::string& error);

  // Tokens emitted since the last call (for live metrics).
  int TakeNewTokens();
  const GenerateResult& result() const { return result_; }
  const std::string& error() const { return error_; }
  bool stopped_by_client() const { return stopped_by_client_; }

  // For a kDone slot: finishes the timings and remembers which tokens the cache now holds.
  void Conclude();
  // Then sends the final event (an exception from on_event is swallowed: the request is over)
  // and goes idle.
  void Release();

 private:
  // Appends `token` to the output, sends its event (with its logprobs from `raw_logits`, the
  // target's row of the emitted position, if asked) and decides whether generation stops.
  void Emit(int32_t token, const float* raw_logits);
  void Stop(StopReason reason);
  void OnPrefillRows(const ForwardOutput& out, int row0, int logit0);
  void OnGenerateRows(const ForwardOutput& out, int row0, int logit0, double forward_ms,
                      bool record_verify_time);
  // The first prompt media item not evaluated yet whose rows are still to be made, or null.
  PromptMedia* PendingMedia();

  const int seq_;
  KvCache& cache_;
  const int n_vocab_, n_embd_;
  const bool media_both_ways_;
  std::vector<uint64_t> cached_;  // idle: PromptKeys of the positions the cache holds, in order
  uint64_t last_used_ = 0;

  // The running request.
  SlotPhase phase_ = SlotPhase::kIdle;
  uint64_t id_ = 0;
  std::vector<int32_t> prompt_;
  std::vector<PromptMedia> media_;
  std::vector<uint64_t> prompt_keys_;
  GenerateParams params_;
  std::function<bool(const EngineEvent&)> on_event_;
  Sampler sampler_{SamplingParams{}};
  Rng rng_{0, 0};
  SpeculativeRound round_;  // the request's speculation (its planner kept for the next request)
  int64_t max_tokens_ = 0;
  GenerateResult result_;
  std::string error_;
  bool stopped_by_client_ = false;
  int new_tokens_ = 0;
  EngineClock::time_point t_prompt_, t_gen_;
  bool generating_started_ = false;

  int prefill_pos_ = 0;           // prompt tokens whose K/V are in the cache
  int planned_prefill_ = 0;       // prompt rows of this step
  std::vector<int32_t> history_;  // prompt + emitted tokens; the last is not in the cache yet
  std::vector<float> hidden_;     // [n_embd] hidden of the row that produced history_.back()
  std::vector<float> probs_;      // [n_vocab] scratch
  TokenLogprobs logprobs_;        // the last emitted token's (top_logprobs >= 0)
  int32_t step_pos_ = 0;          // position of history_.back() this step
};

}  // namespace tandem
