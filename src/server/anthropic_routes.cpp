// /v1/messages (whole or streamed with Anthropic's event sequence) and
// /v1/messages/count_tokens.
#include <algorithm>
#include <chrono>
#include <memory>

#include "server/anthropic_json.h"
#include "server/api_error.h"
#include "server/ids.h"
#include "server/routes.h"
#include "server/sse.h"
#include "server/timings.h"

namespace tandem::server {
namespace {

using Clock = std::chrono::steady_clock;

// Streams one message: message_start and ping at once, then content blocks (thinking, text,
// tool_use) opened and closed as the output changes kind, then message_delta and message_stop.
class AnthropicStream {
 public:
  AnthropicStream(StartedGeneration generation, std::string id, std::string model)
      : generation_(std::move(generation)), id_(std::move(id)), model_(std::move(model)) {}

  bool Step(const ChunkWriter& write) {
    GenerationStream& stream = *generation_.stream;
    const ParsedDelta delta = stream.Next(kSsePoll);
    for (const std::string& w : delta.warnings) generation_.warnings.push_back(w);
    // message_start waits for the first token: only then is the cached part of the prompt known,
    // and its input_tokens (the uncached ones) must be the final message_delta's.
    if (!started_) {
      if (stream.cached_prompt_tokens() < 0 && !stream.finished()) return true;
      started_ = true;
      const int cached = std::max(0, stream.cached_prompt_tokens());
      if (!Send(write, MessageStartEvent(id_, model_, stream.prompt_tokens() - cached, cached)) ||
          !Send(write, PingEvent())) {
        return false;
      }
    }
    for (const ChatPart& part : delta.parts) {
      if (!SendPart(write, part)) return false;
    }
    if (!stream.finished()) {
      if (Clock::now() - last_write_ > kSseKeepAlive && !Send(write, PingEvent())) return false;
      return true;
    }
    const GenerationTotals& totals = stream.totals();
    if (totals.finish == FinishReason::kError) {
      Send(write, ErrorBody(ApiFlavor::kAnthropic, 500, "generation failed: " + totals.error));
      return false;
    }
    if (!CloseBlock(write)) return false;
    if (next_index_ == 0) {  // nothing generated: one empty text block, as the whole response has
      if (!OpenBlock(write, ChatPartKind::kContent, {{"type", "text"}, {"text", ""}}) ||
          !CloseBlock(write)) {
        return false;
      }
    }
    const Json timings = TimingsJson(totals, generation_.params.spec);
    Json message_delta = MessageDeltaEvent(totals, made_tool_calls_, timings);
    if (!generation_.warnings.empty()) message_delta["warnings"] = generation_.warnings;
    LogWarnings(generation_, generation_.warnings);
    if (!Send(write, message_delta)) return false;
    Send(write, MessageStopEvent());
    return false;
  }

  // Completion tokens once finished (for the access log), else -1.
  int tokens() const { return generation_.stream->finished_completion_tokens(); }

 private:
  bool SendPart(const ChunkWriter& write, const ChatPart& part) {
    switch (part.kind) {
      case ChatPartKind::kContent:
        if (open_ != ChatPartKind::kContent || !block_open_) {
          if (!CloseBlock(write) ||
              !OpenBlock(write, part.kind, {{"type", "text"}, {"text", ""}})) {
            return false;
          }
        }
        return Send(write, ContentBlockDeltaEvent(next_index_ - 1,
                                                  {{"type", "text_delta"}, {"text", part.text}}));
      case ChatPartKind::kReasoning:
        if (open_ != ChatPartKind::kReasoning || !block_open_) {
          if (!CloseBlock(write) ||
              !OpenBlock(write, part.kind,
                         {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}})) {
            return false;
          }
        }
        return Send(write, ContentBlockDeltaEvent(next_index_ - 1, {{"type", "thinking_delta"},
                                                                    {"thinking", part.text}}));
      case ChatPartKind::kToolCall: {
        ToolCall call = part.tool_call;
        call.id = RandomId("toolu_");
        made_tool_calls_ = true;
        Json block = ToolUseBlock(call);
        const std::string arguments = JsonText(block["input"]);
        block["input"] = Json::object();
        return CloseBlock(write) && OpenBlock(write, part.kind, block) &&
               Send(write,
                    ContentBlockDeltaEvent(next_index_ - 1, {{"type", "input_json_delta"},
                                                             {"partial_json", arguments}})) &&
               CloseBlock(write);
      }
    }
    return false;
  }

  bool OpenBlock(const ChunkWriter& write, ChatPartKind kind, const Json& block) {
    open_ = kind;
    block_open_ = true;
    return Send(write, ContentBlockStartEvent(next_index_++, block));
  }

  bool CloseBlock(const ChunkWriter& write) {
    if (!block_open_) return true;
    block_open_ = false;
    return Send(write, ContentBlockStopEvent(next_index_ - 1));
  }

  // Writes one event (its SSE name is its "type"); on failure the client is gone.
  bool Send(const ChunkWriter& write, const Json& event) {
    return SendChunk(write, SseEvent(event.value("type", "error"), event), *generation_.stream,
                     last_write_);
  }

  StartedGeneration generation_;
  std::string id_;
  std::string model_;
  bool started_ = false;
  bool block_open_ = false;
  ChatPartKind open_ = ChatPartKind::kContent;
  int next_index_ = 0;
  bool made_tool_calls_ = false;
  Clock::time_point last_write_ = Clock::now();
};

}  // namespace

HttpResponse HandleMessages(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  GenerationRequest request = NewRequest(context);
  ParseMessagesBody(body, request);
  CheckModel(context, request.model);
  StartedGeneration generation = StartGeneration(context, http, request);
  const std::string id = RandomId("msg_");
  if (request.stream) {
    auto stream = std::make_shared<AnthropicStream>(std::move(generation), id, context.model_id);
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.headers = {{"Cache-Control", "no-cache"}};
    response.stream = [stream](const ChunkWriter& write) { return stream->Step(write); };
    response.tokens = [stream] { return stream->tokens(); };
    return response;
  }
  const ChatOutput output = FinishGeneration(context, http, generation, "toolu_");
  const GenerationTotals& totals = generation.stream->totals();
  return GenerationResponse(MessageJson(id, context.model_id, output, totals,
                                        TimingsJson(totals, generation.params.spec)),
                            totals);
}

HttpResponse HandleCountTokens(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  GenerationRequest request = NewRequest(context);
  ParseCountTokensBody(body, request);
  CheckModel(context, request.model);
  const std::vector<int32_t> prompt = EncodePrompt(request, *context.tokenizer, context.limits);
  return JsonResponse(200, {{"input_tokens", prompt.size()}});
}

}  // namespace tandem::server
