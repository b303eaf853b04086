// llama-server's native POST /completion: the fields of /v1/completions (a prompt as text or
// token ids, n_predict, grammar, json_schema, n_probs, ...), answered in llama-server's own shape
// ({content, tokens, stop, stop_type, timings, ...}; streamed as "data: {content, stop: false}"
// events ending with the whole final object, without OpenAI's [DONE]). Its dialect on the
// skeleton of generation_route.h.
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/generation_route.h"
#include "server/logprobs_json.h"
#include "server/media_fields.h"
#include "server/openai_json.h"
#include "server/routes.h"

namespace tandem::server {
namespace {

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
  return {
      {"n_predict", params.n_predict},
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
      {"grammar", request.constraint.kind == ConstraintSource::Kind::kGbnf ? request.constraint.gbnf
                                                                           : std::string()},
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

class NativeDialect final : public ApiDialect {
 public:
  NativeDialect() : ApiDialect({}) {}

  void Parse(const Json& body, GenerationRequest& request) override {
    // The fields of /completion beyond those of /v1/completions.
    static constexpr std::string_view kNativeFields[] = {"multimodal_data", "return_tokens"};
    // llama-server's multimodal prompt: {"prompt": {"prompt_string", "multimodal_data"}}, read
    // as the top-level form.
    const Json* prompt = FindField(body, "prompt");
    if (prompt != nullptr && prompt->is_object()) {
      RejectUnknownFields(*prompt, {"prompt_string", "multimodal_data"}, "prompt");
      Json flat = body;
      flat["prompt"] = RequiredString(*prompt, "prompt_string", "prompt");
      if (const Json* data = FindField(*prompt, "multimodal_data")) {
        if (FindField(body, "multimodal_data") != nullptr) {
          Fail(ErrorKind::kInvalidArgument,
               "multimodal_data is given both in prompt and beside it: give it once");
        }
        flat["multimodal_data"] = *data;
      }
      ParseCompletionBody(flat, request, kNativeFields);
      ParseMultimodalData(flat, request);
    } else {
      ParseCompletionBody(body, request, kNativeFields);
      ParseMultimodalData(body, request);
    }
    // llama-server reads `logprobs: N` here as n_probs (completion_probabilities).
    if (request.top_logprobs > 0 && request.n_probs < 0) request.n_probs = request.top_logprobs;
    request.top_logprobs = -1;
    return_tokens_ = OptionalBool(body, "return_tokens").value_or(false);
  }

  // The ids in `tokens` only when return_tokens asked for them.
  Json Whole(GenerationRun& run, const ChatOutput& output, const Json& timings) override {
    std::vector<int32_t> ids = run.stream().TakeTokens();
    if (!return_tokens_) ids.clear();
    Json j = FinalJson(run, output.content, ids, timings);
    AttachProbabilities(run, j);
    return j;
  }

  // Ids and logprobs of tokens whose text is held back (a possible stop string) go with the
  // event that carries it.
  bool Parts(GenerationRun& run, SseWriter& out, const ParsedDelta& delta) override {
    std::string text;
    for (const ChatPart& part : delta.parts) text += part.text;
    if (text.empty()) return true;
    has_new_line_ |= text.find('\n') != std::string::npos;
    const std::vector<int32_t> ids = run.stream().TakeTokens();
    predicted_ += static_cast<int>(ids.size());
    Json event = EventJson(text, ids, false, predicted_, run.stream().prompt_tokens());
    AttachProbabilities(run, event);
    return out.Event(event);
  }

  bool Finish(GenerationRun& run, SseWriter& out, Json timings) override {
    Json last = FinalJson(run, "", run.stream().TakeTokens(), timings);
    AttachProbabilities(run, last);
    out.Event(last);
    return true;
  }

 private:
  Json FinalJson(const GenerationRun& run, const std::string& content,
                 const std::vector<int32_t>& ids, const Json& timings) const {
    const GenerationTotals& totals = run.stream().totals();
    Json j = EventJson(content, ids, true, totals.completion_tokens, totals.prompt_tokens);
    j["model"] = run.context.model_id;
    j["generation_settings"] = GenerationSettings(run.request, run.generation.params);
    j["prompt"] = run.context.tokenizer->Decode(run.generation.prompt, /*render_special=*/true);
    j["has_new_line"] = has_new_line_ || content.find('\n') != std::string::npos;
    j["truncated"] = false;
    j["stop_type"] = StopType(totals.finish);
    j["stopping_word"] = totals.stop_string;
    j["tokens_cached"] = std::max(0, totals.prompt_tokens + totals.completion_tokens - 1);
    j["timings"] = timings;
    if (!run.generation.warnings.empty()) j["warnings"] = run.generation.warnings;
    return j;
  }

  // The logprobs of the tokens consumed since they were last taken.
  void AttachProbabilities(const GenerationRun& run, Json& j) const {
    const std::vector<TokenLogprobs> entries = run.stream().TakeLogprobs();
    if (run.request.n_probs <= 0 || entries.empty()) return;
    j["completion_probabilities"] =
        CompletionProbabilities(entries, run.request.n_probs, *run.context.tokenizer);
  }

  bool return_tokens_ = false;
  int predicted_ = 0;  // tokens sent so far (streaming)
  bool has_new_line_ = false;
};

}  // namespace

HttpResponse HandleCompletion(const RouteContext& context, const HttpRequest& http) {
  return ServeGeneration(context, http, std::make_shared<NativeDialect>());
}

}  // namespace tandem::server
