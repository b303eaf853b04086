// /v1/chat/completions, /v1/completions and /v1/models.
#include <chrono>
#include <memory>
#include <utility>

#include "server/api_error.h"
#include "server/ids.h"
#include "server/openai_json.h"
#include "server/routes.h"
#include "server/sse.h"
#include "server/timings.h"

namespace tandem::server {
namespace {

using Clock = std::chrono::steady_clock;

// Streams one chat completion (or text completion) as OpenAI chunks.
class OpenAiStream {
 public:
  OpenAiStream(StartedGeneration generation, ResponseMeta meta, bool chat, bool include_usage)
      : generation_(std::move(generation)),
        meta_(std::move(meta)),
        chat_(chat),
        include_usage_(include_usage) {}

  bool Step(const ChunkWriter& write) {
    GenerationStream& stream = *generation_.stream;
    if (!started_) {
      started_ = true;
      last_write_ = Clock::now();
      if (!chat_) return true;
      return Send(write,
                  SseData(ChatChunkJson(meta_, {{"role", "assistant"}, {"content", ""}}, nullptr)));
    }
    const ParsedDelta delta = stream.Next(kSsePoll);
    for (const std::string& w : delta.warnings) generation_.warnings.push_back(w);
    Json live = delta.parts.empty() ? Json() : LiveTimingsJson(stream.TakeLiveSpec());
    for (const ChatPart& part : delta.parts) {
      Json chunk = ChunkFor(part);
      if (!live.is_null()) chunk["timings"] = std::exchange(live, Json());
      if (!Send(write, SseData(chunk))) return false;
    }
    if (!stream.finished()) {
      if (Clock::now() - last_write_ > kSseKeepAlive && !Send(write, SseComment("keep-alive"))) {
        return false;
      }
      return true;
    }
    const GenerationTotals& totals = stream.totals();
    if (totals.finish == FinishReason::kError) {
      Send(write,
           SseData(ErrorBody(ApiFlavor::kOpenAi, 500, "generation failed: " + totals.error)));
      write(SseDone());
      return false;
    }
    Json timings = TimingsJson(totals, generation_.params.spec);
    timings["speculative"]["draft_rounds"] = stream.TakeLiveSpec().new_rounds;
    const Json finish = OpenAiFinishReason(totals, tool_calls_ > 0);
    Json last =
        chat_ ? ChatChunkJson(meta_, Json::object(), finish) : TextChunkJson(meta_, "", finish);
    last["timings"] = timings;
    if (!generation_.warnings.empty()) last["warnings"] = generation_.warnings;
    LogWarnings(generation_, generation_.warnings);
    if (!Send(write, SseData(last))) return false;
    if (include_usage_) {
      Json usage =
          chat_ ? ChatChunkJson(meta_, Json::object(), nullptr) : TextChunkJson(meta_, "", nullptr);
      usage["choices"] = Json::array();
      usage["usage"] = OpenAiUsage(totals);
      if (!Send(write, SseData(usage))) return false;
    }
    write(SseDone());
    return false;
  }

  // Completion tokens once finished (for the access log), else -1.
  int tokens() const {
    const GenerationStream& s = *generation_.stream;
    return s.finished() ? s.totals().completion_tokens : -1;
  }

 private:
  Json ChunkFor(const ChatPart& part) {
    if (!chat_) return TextChunkJson(meta_, part.text, nullptr);
    switch (part.kind) {
      case ChatPartKind::kContent:
        return ChatChunkJson(meta_, {{"content", part.text}}, nullptr);
      case ChatPartKind::kReasoning:
        return ChatChunkJson(meta_, {{"reasoning_content", part.text}}, nullptr);
      case ChatPartKind::kToolCall: {
        ToolCall call = part.tool_call;
        call.id = RandomId("call_");
        return ChatChunkJson(
            meta_, {{"tool_calls", Json::array({OpenAiToolCall(call, tool_calls_++)})}}, nullptr);
      }
    }
    return {};
  }

  // Writes one chunk; on failure the client is gone: stop generating.
  bool Send(const ChunkWriter& write, const std::string& chunk) {
    if (!write(chunk)) {
      generation_.stream->Cancel();
      return false;
    }
    last_write_ = Clock::now();
    return true;
  }

  StartedGeneration generation_;
  ResponseMeta meta_;
  bool chat_;
  bool include_usage_;
  bool started_ = false;
  int tool_calls_ = 0;
  Clock::time_point last_write_;
};

HttpResponse StreamResponse(StartedGeneration generation, ResponseMeta meta, bool chat,
                            bool include_usage) {
  auto stream =
      std::make_shared<OpenAiStream>(std::move(generation), std::move(meta), chat, include_usage);
  HttpResponse response;
  response.content_type = "text/event-stream";
  response.headers = {{"Cache-Control", "no-cache"}};
  response.stream = [stream](const ChunkWriter& write) { return stream->Step(write); };
  response.tokens = [stream] { return stream->tokens(); };
  return response;
}

}  // namespace

HttpResponse HandleChatCompletions(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  GenerationRequest request = NewRequest(context);
  ParseChatCompletionBody(body, request);
  CheckModel(context, request.model);
  StartedGeneration generation = StartGeneration(context, http, request);
  ResponseMeta meta{RandomId("chatcmpl-"), UnixSeconds(), context.model_id};
  if (request.stream) {
    return StreamResponse(std::move(generation), std::move(meta), true, request.include_usage);
  }
  const ChatOutput output = FinishGeneration(context, http, generation, "call_");
  const GenerationTotals& totals = generation.stream->totals();
  return GenerationResponse(
      ChatCompletionJson(meta, output, totals, TimingsJson(totals, generation.params.spec)),
      totals);
}

HttpResponse HandleCompletions(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  GenerationRequest request = NewRequest(context);
  ParseCompletionBody(body, request);
  CheckModel(context, request.model);
  StartedGeneration generation = StartGeneration(context, http, request);
  ResponseMeta meta{RandomId("cmpl-"), UnixSeconds(), context.model_id};
  if (request.stream) {
    return StreamResponse(std::move(generation), std::move(meta), false, request.include_usage);
  }
  const ChatOutput output = FinishGeneration(context, http, generation, "call_");
  const GenerationTotals& totals = generation.stream->totals();
  return GenerationResponse(
      TextCompletionJson(meta, output.content, totals, TimingsJson(totals, generation.params.spec)),
      totals);
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
                  {"speculative", context.limits.spec.type != SpecType::kNone}}}};
  return JsonResponse(200, {{"object", "list"},
                            {"data", Json::array({model})},
                            {"has_more", false},
                            {"first_id", context.model_id},
                            {"last_id", context.model_id}});
}

}  // namespace tandem::server
