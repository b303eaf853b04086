// /v1/messages (Anthropic's dialect: its parser and its message / event shapes on the skeleton of
// generation_route.h) and /v1/messages/count_tokens.
#include <algorithm>
#include <memory>

#include "server/anthropic_json.h"
#include "server/generation_route.h"
#include "server/ids.h"
#include "server/routes.h"

namespace tandem::server {
namespace {

// A message object, or its event sequence: message_start and ping with the first token, then
// content blocks (thinking, text, tool_use) opened and closed as the output changes kind, then
// message_delta and message_stop.
class AnthropicDialect final : public ApiDialect {
 public:
  AnthropicDialect() : ApiDialect({.named_events = true}, "toolu_") {}

  void Parse(const Json& body, GenerationRequest& request) override {
    ParseMessagesBody(body, request);
  }

  void Admitted(const GenerationRun&) override { id_ = RandomId("msg_"); }

  Json Whole(GenerationRun& run, const ChatOutput& output, const Json& timings) override {
    return MessageJson(id_, run.context.model_id, output, run.stream().totals(), timings);
  }

  // message_start waits for the first token: only then is the cached part of the prompt known,
  // and its input_tokens (the uncached ones) must be the final message_delta's.
  bool ReadyToOpen(const GenerationStream& stream) const override {
    return stream.cached_prompt_tokens() >= 0 || stream.finished();
  }

  bool Open(GenerationRun& run, SseWriter& out) override {
    const GenerationStream& stream = run.stream();
    const int cached = std::max(0, stream.cached_prompt_tokens());
    return out.Event(MessageStartEvent(id_, run.context.model_id, stream.prompt_tokens() - cached,
                                       cached)) &&
           out.Event(PingEvent());
  }

  bool Parts(GenerationRun&, SseWriter& out, const ParsedDelta& delta) override {
    for (const ChatPart& part : delta.parts) {
      if (!SendPart(out, part)) return false;
    }
    return true;
  }

  bool KeepAlive(SseWriter& out) override { return out.Event(PingEvent()); }

  bool Finish(GenerationRun& run, SseWriter& out, Json timings) override {
    if (!CloseBlock(out)) return false;
    if (next_index_ == 0) {  // nothing generated: one empty text block, as the whole response has
      if (!OpenBlock(out, ChatPartKind::kContent, {{"type", "text"}, {"text", ""}}) ||
          !CloseBlock(out)) {
        return false;
      }
    }
    Json message_delta = MessageDeltaEvent(run.stream().totals(), made_tool_calls_, timings);
    if (!run.generation.warnings.empty()) message_delta["warnings"] = run.generation.warnings;
    if (!out.Event(message_delta)) return false;
    out.Event(MessageStopEvent());
    return true;
  }

 private:
  bool SendPart(SseWriter& out, const ChatPart& part) {
    switch (part.kind) {
      case ChatPartKind::kContent:
        if (open_ != ChatPartKind::kContent || !block_open_) {
          if (!CloseBlock(out) || !OpenBlock(out, part.kind, {{"type", "text"}, {"text", ""}})) {
            return false;
          }
        }
        return out.Event(
            ContentBlockDeltaEvent(next_index_ - 1, {{"type", "text_delta"}, {"text", part.text}}));
      case ChatPartKind::kReasoning:
        if (open_ != ChatPartKind::kReasoning || !block_open_) {
          if (!CloseBlock(out) ||
              !OpenBlock(out, part.kind,
                         {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}})) {
            return false;
          }
        }
        return out.Event(ContentBlockDeltaEvent(
            next_index_ - 1, {{"type", "thinking_delta"}, {"thinking", part.text}}));
      case ChatPartKind::kToolCall: {
        made_tool_calls_ = true;
        Json block = ToolUseBlock(part.tool_call);
        const std::string arguments = JsonText(block["input"]);
        block["input"] = Json::object();
        return CloseBlock(out) && OpenBlock(out, part.kind, block) &&
               out.Event(ContentBlockDeltaEvent(
                   next_index_ - 1, {{"type", "input_json_delta"}, {"partial_json", arguments}})) &&
               CloseBlock(out);
      }
    }
    return false;
  }

  bool OpenBlock(SseWriter& out, ChatPartKind kind, const Json& block) {
    open_ = kind;
    block_open_ = true;
    return out.Event(ContentBlockStartEvent(next_index_++, block));
  }

  bool CloseBlock(SseWriter& out) {
    if (!block_open_) return true;
    block_open_ = false;
    return out.Event(ContentBlockStopEvent(next_index_ - 1));
  }

  std::string id_;
  bool block_open_ = false;
  ChatPartKind open_ = ChatPartKind::kContent;
  int next_index_ = 0;
  bool made_tool_calls_ = false;
};

}  // namespace

HttpResponse HandleMessages(const RouteContext& context, const HttpRequest& http) {
  return ServeGeneration(context, http, std::make_shared<AnthropicDialect>());
}

HttpResponse HandleCountTokens(const RouteContext& context, const HttpRequest& http) {
  const GenerationRequest request = ParseRequest(context, http, ParseCountTokensBody);
  const std::vector<int32_t> prompt = EncodePrompt(request, *context.tokenizer, context.limits);
  return JsonResponse(200, {{"input_tokens", prompt.size()}});
}

}  // namespace tandem::server
