// llama-server's native POST /completion: the fields of /v1/completions (a prompt as text or
// token ids, n_predict, grammar, json_schema, n_probs, ...), answered in llama-server's own shape
// ({content, tokens, stop, stop_type, timings, ...}; streamed as "data: {content, stop: false}"
// events ending with the whole final object, without OpenAI's [DONE]).
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "server/api_error.h"
#include "server/logprobs_json.h"
#include "server/openai_json.h"
#include "server/routes.h"
#include "server/sse.h"
#include "server/timings.h"

namespace tandem::server {
namespace {

using Clock = std::chrono::steady_clock;

const char* StopType(FinishReason finish) {
  switch (finish) {
    case FinishReason::kEndOfTurn:
      return "eos";
    case FinishReason::kStopString:
      return "word";
    case FinishReason::kLength:
      return "limit";
    case FinishReason::kCancelled:
    case FinishReason::kError:
      break;
  }
  return "none";
}

// What the request ran with, under llama-server's names.
Json GenerationSettings(const GenerationRequest& request, const GenerateParams& params) {
  const SamplingParams& s = params.sampling;
  return {{"n_predict", params.n_predict},
          {"max_tokens", params.n_predict},
          {"temperature", s.temperature},
          {"top_k", s.top_k},
          {"top_p", s.top_p},
          {"min_p", s.min_p},
          {"seed", s.seed},
          {"repeat_penalty", s.repeat_penalty},
          {"repeat_last_n", s.repeat_last_n},
          {"presence_penalty", s.presence_penalty},
          {"frequency_penalty", s.frequency_penalty},
          {"stop", request.stop},
          {"ignore_eos", request.ignore_eos},
          {"stream", request.stream},
          {"n_probs", std::max(request.n_probs, 0)},
          {"grammar", request.grammar},
          {"speculative.type", SpecTypeName(params.spec.type)}};
}

// The fields every event carries; the final one adds the rest (FinalJson).
Json EventJson(const std::string& content, const std::vector<int32_t>& tokens, bool stop,
               int predicted, int evaluated) {
  return {{"index", 0},
          {"content", content},
          {"tokens", tokens},
          {"stop", stop},
          {"id_slot", -1},
          {"tokens_predicted", predicted},
          {"tokens_evaluated", evaluated}};
}

class NativeCompletion {
 public:
  NativeCompletion(const RouteContext& context, GenerationRequest request,
                   StartedGeneration generation)
      : context_(context), request_(std::move(request)), generation_(std::move(generation)) {}

  // Non-streaming: the whole output; ids in `tokens` only when return_tokens asked for them.
  Json Finish(const HttpRequest& http, bool return_tokens) {
    const ChatOutput output = FinishGeneration(context_, http, generation_, "call_");
    std::vector<int32_t> ids = generation_.stream->TakeTokens();
    if (!return_tokens) ids.clear();
    Json j = FinalJson(output.content, ids);
    AttachProbabilities(j, generation_.stream->TakeLogprobs());
    return j;
  }

  bool streaming() const { return request_.stream; }

  bool Step(const ChunkWriter& write) {
    GenerationStream& stream = *generation_.stream;
    const ParsedDelta delta = stream.Next(kSsePoll);
    for (const std::string& w : delta.warnings) generation_.warnings.push_back(w);
    // Ids and logprobs of tokens whose text is held back (a possible stop string) go with the
    // event that carries it.
    for (int32_t id : stream.TakeTokens()) pending_ids_.push_back(id);
    for (TokenLogprobs& e : stream.TakeLogprobs()) pending_logprobs_.push_back(std::move(e));
    std::string text;
    for (const ChatPart& part : delta.parts) text += part.text;
    if (!text.empty()) {
      has_new_line_ |= text.find('\n') != std::string::npos;
      predicted_ += static_cast<int>(pending_ids_.size());
      Json event = EventJson(text, std::exchange(pending_ids_, {}), false, predicted_,
                             stream.prompt_tokens());
      AttachProbabilities(event, std::exchange(pending_logprobs_, {}));
      if (!Send(write, SseData(event))) return false;
    }
    if (!stream.finished()) {
      if (Clock::now() - last_write_ > kSseKeepAlive && !Send(write, SseComment("keep-alive"))) {
        return false;
      }
      return true;
    }
    if (stream.totals().finish == FinishReason::kError) {
      Send(write, SseData(ErrorBody(ApiFlavor::kOpenAi, 500,
                                    "generation failed: " + stream.totals().error)));
      return false;
    }
    Json last = FinalJson("", std::exchange(pending_ids_, {}));
    AttachProbabilities(last, std::exchange(pending_logprobs_, {}));
    LogWarnings(generation_, generation_.warnings);
    Send(write, SseData(last));
    return false;
  }

  const GenerationTotals& totals() const { return generation_.stream->totals(); }

  int tokens() const { return generation_.stream->finished_completion_tokens(); }

 private:
  Json FinalJson(const std::string& content, const std::vector<int32_t>& ids) const {
    const GenerationTotals& totals = generation_.stream->totals();
    Json j = EventJson(content, ids, true, totals.completion_tokens, totals.prompt_tokens);
    j["model"] = context_.model_id;
    j["generation_settings"] = GenerationSettings(request_, generation_.params);
    j["prompt"] = context_.tokenizer->Decode(generation_.prompt, /*render_special=*/true);
    j["has_new_line"] = has_new_line_ || content.find('\n') != std::string::npos;
    j["truncated"] = false;
    j["stop_type"] = StopType(totals.finish);
    j["stopping_word"] = totals.stop_string;
    j["tokens_cached"] = std::max(0, totals.prompt_tokens + totals.completion_tokens - 1);
    j["timings"] = TimingsJson(totals, generation_.params.spec);
    if (!generation_.warnings.empty()) j["warnings"] = generation_.warnings;
    return j;
  }

  void AttachProbabilities(Json& j, const std::vector<TokenLogprobs>& entries) const {
    if (request_.n_probs <= 0 || entries.empty()) return;
    j["completion_probabilities"] =
        CompletionProbabilities(entries, request_.n_probs, *context_.tokenizer);
  }

  bool Send(const ChunkWriter& write, const std::string& chunk) {
    return SendChunk(write, chunk, *generation_.stream, last_write_);
  }

  RouteContext context_;  // a copy: a stream outlives the handler's call
  GenerationRequest request_;
  StartedGeneration generation_;
  std::vector<int32_t> pending_ids_;  // consumed, not yet sent (streaming)
  std::vector<TokenLogprobs> pending_logprobs_;
  int predicted_ = 0;  // tokens sent so far (streaming)
  bool has_new_line_ = false;
  Clock::time_point last_write_ = Clock::now();
};

}  // namespace

HttpResponse HandleCompletion(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  GenerationRequest request = NewRequest(context);
  ParseCompletionBody(body, request);
  // llama-server reads `logprobs: N` here as n_probs (completion_probabilities).
  if (request.top_logprobs > 0 && request.n_probs < 0) request.n_probs = request.top_logprobs;
  request.top_logprobs = -1;
  const bool return_tokens = OptionalBool(body, "return_tokens").value_or(false);
  CheckModel(context, request.model);
  StartedGeneration generation = StartGeneration(context, http, request);
  auto completion =
      std::make_shared<NativeCompletion>(context, std::move(request), std::move(generation));
  if (!completion->streaming()) {
    return GenerationResponse(completion->Finish(http, return_tokens), completion->totals());
  }
  HttpResponse response;
  response.content_type = "text/event-stream";
  response.headers = {{"Cache-Control", "no-cache"}};
  response.stream = [completion](const ChunkWriter& write) { return completion->Step(write); };
  response.tokens = [completion] { return completion->tokens(); };
  return response;
}

}  // namespace tandem::server
