// /v1/chat/completions and /v1/completions (OpenAI's dialect: their parsers and response shapes
// on the skeleton of generation_route.h), and /v1/models.
#include <utility>

#include "server/generation_route.h"
#include "server/ids.h"
#include "server/logprobs_json.h"
#include "server/openai_json.h"
#include "server/routes.h"
#include "server/timings.h"

namespace tandem::server {
namespace {

// Chat completions (chat) or text completions: a response or chat.completion.chunk /
// text_completion chunks, the last with finish_reason and timings, then an optional usage chunk
// and data: [DONE].
class OpenAiDialect final : public ApiDialect {
 public:
  explicit OpenAiDialect(bool chat)
      : ApiDialect({.done_marker = true, .open_at_once = true}), chat_(chat) {}

  void Parse(const Json& body, GenerationRequest& request) override {
    if (chat_) {
      ParseChatCompletionBody(body, request);
    } else {
      ParseCompletionBody(body, request);
    }
  }

  void Admitted(const GenerationRun& run) override {
    meta_ = {RandomId(chat_ ? "chatcmpl-" : "cmpl-"), UnixSeconds(), run.context.model_id};
  }

  Json Whole(GenerationRun& run, const ChatOutput& output, const Json& timings) override {
    const GenerationTotals& totals = run.stream().totals();
    Json response = chat_ ? ChatCompletionJson(meta_, output, totals, timings)
                          : TextCompletionJson(meta_, output.content, totals, timings);
    AttachLogprobs(run, response, run.stream().TakeLogprobs());
    return response;
  }

  bool Open(GenerationRun&, SseWriter& out) override {
    if (!chat_) return true;
    return out.Event(ChatChunkJson(meta_, {{"role", "assistant"}, {"content", ""}}, nullptr));
  }

  bool Parts(GenerationRun& run, SseWriter& out, const ParsedDelta& delta) override {
    Json live = delta.parts.empty() ? Json() : LiveTimingsJson(run.stream().TakeLiveSpec());
    for (const ChatPart& part : delta.parts) {
      Json chunk = ChunkFor(part);
      if (!live.is_null()) chunk["timings"] = std::exchange(live, Json());
      AttachPending(run, chunk);
      if (!out.Event(chunk)) return false;
    }
    return true;
  }

  bool Finish(GenerationRun& run, SseWriter& out, Json timings) override {
    const GenerationTotals& totals = run.stream().totals();
    timings["speculative"]["draft_rounds"] = run.stream().TakeLiveSpec().new_rounds;
    const Json finish = OpenAiFinishReason(totals, tool_calls_ > 0);
    Json last =
        chat_ ? ChatChunkJson(meta_, Json::object(), finish) : TextChunkJson(meta_, "", finish);
    last["timings"] = timings;
    AttachPending(run, last);
    if (!run.generation.warnings.empty()) last["warnings"] = run.generation.warnings;
    if (!out.Event(last)) return false;
    if (run.request.include_usage) {
      Json usage =
          chat_ ? ChatChunkJson(meta_, Json::object(), nullptr) : TextChunkJson(meta_, "", nullptr);
      usage["choices"] = Json::array();
      usage["usage"] = OpenAiUsage(totals);
      if (!out.Event(usage)) return false;
    }
    return true;
  }

 private:
  Json ChunkFor(const ChatPart& part) {
    if (!chat_) return TextChunkJson(meta_, part.text, nullptr);
    switch (part.kind) {
      case ChatPartKind::kContent:
        return ChatChunkJson(meta_, {{"content", part.text}}, nullptr);
      case ChatPartKind::kReasoning:
        return ChatChunkJson(meta_, {{"reasoning_content", part.text}}, nullptr);
      case ChatPartKind::kToolCall:
        return ChatChunkJson(
            meta_, {{"tool_calls", Json::array({OpenAiToolCall(part.tool_call, tool_calls_++)})}},
            nullptr);
    }
    return {};
  }

  // The logprobs of `entries` as the request asked for them: OpenAI's choices[0].logprobs
  // (top_logprobs >= 0) and llama-server's completion_probabilities (n_probs > 0).
  void AttachLogprobs(const GenerationRun& run, Json& j,
                      const std::vector<TokenLogprobs>& entries) {
    const GenerationRequest& request = run.request;
    const Tokenizer& tokenizer = *run.context.tokenizer;
    if (request.top_logprobs >= 0) {
      j["choices"][0]["logprobs"] =
          chat_ ? Json{{"content", ChatLogprobsContent(entries, request.top_logprobs, tokenizer)}}
                : CompletionLogprobs(entries, request.top_logprobs, tokenizer, text_offset_);
    }
    if (request.n_probs > 0) {
      j["completion_probabilities"] = CompletionProbabilities(entries, request.n_probs, tokenizer);
    }
  }

  // A chunk carries the logprobs of the tokens consumed since the previous one (text held back,
  // e.g. a possible stop string, sends its tokens' logprobs with the chunk that has it).
  void AttachPending(GenerationRun& run, Json& chunk) {
    if (run.request.top_logprobs < 0 && run.request.n_probs <= 0) return;
    const std::vector<TokenLogprobs> entries = run.stream().TakeLogprobs();
    if (!entries.empty()) AttachLogprobs(run, chunk, entries);
  }

  const bool chat_;
  ResponseMeta meta_;
  size_t text_offset_ = 0;  // completions: where the next logprobs entry starts in the text
  int tool_calls_ = 0;
};

}  // namespace

HttpResponse HandleChatCompletions(const RouteContext& context, const HttpRequest& http) {
  return ServeGeneration(context, http, std::make_shared<OpenAiDialect>(/*chat=*/true));
}

HttpResponse HandleCompletions(const RouteContext& context, const HttpRequest& http) {
  return ServeGeneration(context, http, std::make_shared<OpenAiDialect>(/*chat=*/false));
}

HttpResponse HandleModels(const RouteContext& context, const HttpRequest&) {
  Json model = {{"id", context.model_id},
                {"object", "model"},
                {"type", "model"},
                {"display_name", context.model_id},
                {"created", 0},
                {"created_at", "1970-01-01T00:00:00Z"},
                {"owned_by", "tandem"},
                {"meta",
                 {{"n_ctx", context.limits.n_ctx},
                  {"n_vocab", context.tokenizer->n_tokens()},
                  {"speculative", context.limits.spec.type != SpecType::kNone},
                  {"modalities",
                   {{"vision", context.images != nullptr}, {"audio", context.audio != nullptr}}}}}};
  return JsonResponse(200, {{"object", "list"},
                            {"data", Json::array({model})},
                            {"has_more", false},
                            {"first_id", context.model_id},
                            {"last_id", context.model_id}});
}

}  // namespace tandem::server
