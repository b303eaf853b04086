// One serving slot: a KV-cache sequence, the tokens it holds for the prompt cache, and the request
// running in it. Each step the engine asks the slot for its rows (after its drafter drafted),
// runs the merged forward, and hands the slot its output rows; the slot then runs the rest of the
// speculative round: verify, accept, emit, stop. This is the only decoding loop: Generator is a
// one-slot engine (Engine::RunHere), so `tandem run`, `bench` and `tandem serve` share it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/stopwatch.h"
#include "engine/request.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "speculative/draft_planner.h"
#include "speculative/drafter.h"
#include "speculative/forced_run_policy.h"
#include "speculative/slot_grammar.h"

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
  bool speculating() const { return drafter_ != nullptr; }
  Drafter* drafter() const { return drafter_; }  // the running request's drafter, or null
  // Most drafts this round may have (Generator's cap: remaining tokens - 1, the context, the
  // per-call batch limit, draft_max); 0 when not speculating, unless a grammar may force tokens.
  int DraftCap() const;
  // The planner's choice for this round (lookup and model drafts), in [0, cap]; its time is
  // counted in SpeculationStats::plan_ms. `n_generating`: the slots generating in this step (a
  // greedy request's probes are paced by it).
  int ChooseDraftLength(int cap, int n_generating);
  // True if a shorter draft than chosen cannot change the output: greedy (verification keeps the
  // target's argmax) or adaptive (lengths already depend on timing). Sampled (or synthetic-
  // acceptance) requests with a fixed draft length must get exactly that length, or wait.
  bool CanShortenDrafts() const {
    return (greedy_ && params_.synthetic_acceptance.empty()) || params_.spec.adaptive;
  }
  // The draft request for n tokens from the committed state (pointers into this slot). With a
  // grammar, the drafter follows it (request.constraint) and SetDrafts rolls it back.
  DraftRequest MakeDraftRequest(int n);
  // Grammar drafts: when the grammar alone determines the next tokens (or leaves a choice the
  // request's layout habit fills: SlotGrammar::AppendForced), this round's drafts are those (at
  // most n, no drafter step) and their count is returned; the caller then skips the drafter.
  // 0 (no drafts) otherwise, and when `drafter_next` (the planner chose to draft) and the
  // first would be a guess: the drafter drafts there. n = 0 clears this round's drafts.
  int TakeForcedDrafts(int n, bool drafter_next = false);
  // The drafts for this round and the time spent making them.
  void SetDrafts(DraftResult drafts, double ms);
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
  // draft: see ForcedWithoutLogits). Returns how many rows carry logits.
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
  // The target's logits at a verified position, masked by the grammar (if any).
  const float* Constrained(const float* logits);
  // Whether draft i is grammar-forced (not a layout guess) and the row verifying it needs no
  // logits: the grammar allows that token alone there, so the masked distribution is a point
  // mass on it whatever the logits (accepted whenever reached). Not when the request wants
  // logprobs, a synthetic acceptance, or bans the token (a -inf logit bias: then the forced
  // token is an error the sampler reports).
  bool ForcedWithoutLogits(int i) const;
  // Whether rows' logits may be limited to the grammar's allowed tokens (ForwardBatch::
  // logit_tokens): a grammar, and nothing that reads the unmasked row (logprobs, benchmarks).
  bool LimitsLogits() const;
  // The first prompt media item not evaluated yet whose rows are still to be made, or null.
  PromptMedia* PendingMedia();
  // The grammar's allowed tokens at its current state where they are few enough for a row
  // gather to pay (counted in limited_logit_rows), else empty (every token).
  std::vector<int32_t> LimitedLogitTokens();
  // SlotGrammar::AppendForced on this round's drafts (guesses priced by the planner's row
  // costs), its flags into forced_guessed_; returns how many it appended.
  int AppendGrammarDrafts(int n_max);

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
  Rng rng_{0, 0}, draft_rng_{0, 1}, synthetic_rng_{0, 2};
  bool greedy_ = true;
  Drafter* drafter_ = nullptr;
  DraftPlanner planner_;
  const Drafter* planner_drafter_ = nullptr;  // planner_'s drafter (kept past Release)
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
  std::vector<float> probs_, residual_;   // [n_vocab] scratch
  DraftResult drafts_;                    // this round's drafts
  int forced_drafts_ = 0;                 // ... of which the last ones are the grammar's
  std::vector<bool> forced_guessed_;      // ... [i]: the i-th of those is a layout guess
  std::vector<int> row_logits_;           // this round's rows: index among its logits, or -1
  int draft_n_max_ = 0;                   // the drafter's n_max this round
  std::unique_ptr<SlotGrammar> grammar_;  // the request's constraint, or null
  ForcedRunPolicy forced_runs_;           // ... whether drafts go on through its forced runs
  TokenLogprobs logprobs_;                // the last emitted token's (top_logprobs >= 0)
  int32_t step_pos_ = 0;                  // position of history_.back() this step
};

}  // namespace tandem
