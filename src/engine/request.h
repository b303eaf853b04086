// What a caller asks of generation and what it gets back: the types shared by Generator
// (`tandem run`, `bench`), the serving engine and the server, free of model headers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/stop_reason.h"
#include "sampling/logprobs.h"
#include "sampling/sampling_params.h"
#include "speculative/grammar_constraint.h"
#include "speculative/spec_options.h"
#include "speculative/speculation_stats.h"

namespace tandem {

class ThreadPool;

struct GenerateParams {
  int n_predict = 128;  // tokens to generate at most (-1: until EOG or context end)
  SamplingParams sampling;
  SpecOptions spec;  // type kNone: plain decoding
  // Whose text suffix drafting may draft from and keeps this request's in (SuffixIndex's
  // tenant): the server gives the API key the request presented, "" is the shared tenant.
  std::string tenant;
  std::vector<int32_t> eog_tokens;  // generation stops after emitting one of these
  GrammarConstraint grammar;
  // >= 0: every token event carries the token's log-probability and the `top_logprobs` most
  // likely tokens (TokenLogprobs, sampling/logprobs.h); -1: none are computed.
  int top_logprobs = -1;
  // Benchmarks only (`tandem bench --synthetic-acceptance`): draft position i is accepted with
  // probability rate[min(i, size - 1)] instead of by verification, so the mechanism's cost can
  // be measured at a chosen acceptance. The emitted text is then meaningless.
  std::vector<float> synthetic_acceptance;
  // Under a grammar, rows whose allowed tokens are few get logits for those tokens only (the
  // output is the same bits either way; tests turn it off to show that).
  bool limit_constrained_logits = true;
  // Called after each prefill chunk with (prompt tokens evaluated, prompt tokens to evaluate).
  std::function<void(int done, int total)> on_prefill_progress;
};

struct GenerateResult {
  std::vector<int32_t> tokens;  // generated, EOG included if one stopped generation
  StopReason stop_reason = StopReason::kNone;
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;  // reused from the previous call's cache
  double prompt_ms = 0;
  int prompt_media = 0;        // media items in the prompt
  int prompt_audio = 0;        // of which audio
  double media_encode_ms = 0;  // encoding the prompt's media on the engine thread
  double audio_encode_ms = 0;  // of which audio
  double generate_ms = 0;
  SpeculationStats spec;
};

// One event per emitted token, then a final one. Runs on the engine thread: keep it short
// (hand the data to another thread). Returning false cancels the request (client went away).
// Every token of result->tokens gets an event, an EOG token that ended generation included.
// result->stop_reason: kEog, kLength, kContext, kStopped (on_event returned false), kCancelled
// (Cancel(), shutdown, or a request that never left the queue) or kError (with `error` set). An
// exception thrown by on_event fails that request only.
struct EngineEvent {
  int32_t token = -1;  // -1 on the final event
  bool final = false;
  const GenerateResult* result = nullptr;   // on the final event: tokens, timings, spec stats
  const SpeculationStats* spec = nullptr;   // on token events: the request's statistics so far
  int cached_prompt_tokens = 0;             // on token events: prompt tokens the cache served
  const TokenLogprobs* logprobs = nullptr;  // on token events when params.top_logprobs >= 0
  std::string error;                        // on the final event if the request failed
};

// One media item of a prompt (an image): its soft tokens fill prompt[begin, begin + count), where
// the prompt holds placeholder ids, and enter the forward as the rows of `embeddings` (count x
// n_embd floats, the encoder's output). `key` names the content and how it was prepared: the
// prompt cache reuses a slot's rows of a media item only when the keys agree.
// Encoding work for a media item, run by the engine on its own thread and pool a piece per engine
// step, so that a long encode delays other requests' decoding by one piece at a time.
class MediaJob {
 public:
  virtual ~MediaJob() = default;
  // Runs the next piece; true once the rows are ready.
  virtual bool Step(ThreadPool& pool) = 0;
  virtual std::shared_ptr<const std::vector<float>> Result() = 0;
};

struct PromptMedia {
  int32_t begin = 0;
  int32_t count = 0;
  uint64_t key = 0;
  // The rows, or null while `job` has them to make (a prompt cache hit never runs it).
  std::shared_ptr<const std::vector<float>> embeddings = nullptr;
  std::shared_ptr<MediaJob> job = nullptr;
  // Audio rows are attended causally whatever the target's image rule (docs/gemma4.md,
  // § Media rows); their encode time is reported apart.
  bool audio = false;
};

struct EngineRequest {
  std::vector<int32_t> prompt;
  GenerateParams params;  // params.spec.type kNone disables speculation for this request
  std::function<bool(const EngineEvent&)> on_event;
  std::vector<PromptMedia> media = {};  // in prompt order, not overlapping
};

}  // namespace tandem
