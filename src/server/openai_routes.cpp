// /v1/chat/completions, /v1/completions and /v1/models.
#include <chrono>
#include <memory>
#include <utility>

#include "server/api_error.h"
#include "server/ids.h"
#include "server/logprobs_json.h"
#include "server/openai_json.h"
#include "server/routes.h"
#include "server/sse.h"
#include "server/timings.h"

namespace tandem::server {
namespace {

using Clock = std::chrono::steady_clock;

// What a response reports of token logprobs, and in which shapes (GenerationRequest).
struct LogprobsAsked {
  int top_logprobs = -1;  // OpenAI: choices[0].logprobs (-1: null)
  int n_probs = -1;       // llama-server: completion_probabilities (-1: absent)
  const Tokenizer* tokenizer = nullptr;

  bool any() const { return top_logprobs >= 0 || n_probs > 0; }
  // Sets the logprobs of `entries` on a response or chunk; `text_offset` (completions) advances.
  void Attach(Json& j, bool chat, const std::vector<TokenLogprobs>& entries,
              size_t& text_offset) const {
    if (top_logprobs >= 0) {
      j["choices"][0]["logprobs"] =
          chat ? Json{{"content", ChatLogprobsContent(entries, top_logprobs, *tokenizer)}}
               : CompletionLogprobs(entries, top_logprobs, *tokenizer, text_offset);
    }
    if (n_probs > 0)
      j["completion_probabilities"] = CompletionProbabilities(entries, n_probs, *tokenizer);
  }
};

LogprobsAsked AskedOf(const GenerationRequest& request, const RouteContext& context) {
  return {request.top_logprobs, request.n_probs, context.tokenizer};
}

// Streams one chat completion (or text completion) as OpenAI chunks.
class OpenAiStream {
 public:
  OpenAiStream(StartedGeneration generation, ResponseMeta meta, bool chat, bool include_usage,
               LogprobsAsked logprobs)
      : generation_(std::move(generation)),
        meta_(std::move(meta)),
        chat_(chat),
        include_usage_(include_usage),
        logprobs_(logprobs) {}

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
    // Each chunk carries the logprobs of the tokens consumed since the previous one (text held
    // back, e.g. a possible stop string, sends its tokens' logprobs with the chunk that has it).
    for (TokenLogprobs& e : stream.TakeLogprobs()) pending_logprobs_.push_back(std::move(e));
    Json live = delta.parts.empty() ? Json() : LiveTimingsJson(stream.TakeLiveSpec());
    for (const ChatPart& part : delta.parts) {
      Json chunk = ChunkFor(part);
      if (!live.is_null()) chunk["timings"] = std::exchange(live, Json());
      AttachPending(chunk);
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
    AttachPending(last);
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
  int tokens() const { return generation_.stream->finished_completion_tokens(); }

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

  void AttachPending(Json& chunk) {
    if (!logprobs_.any() || pending_logprobs_.empty()) return;
    logprobs_.Attach(chunk, chat_, pending_logprobs_, text_offset_);
    pending_logprobs_.clear();
  }

  // Writes one chunk; on failure the client is gone: stop generating.
  bool Send(const ChunkWriter& write, const std::string& chunk) {
    return SendChunk(write, chunk, *generation_.stream, last_write_);
  }

  StartedGeneration generation_;
  ResponseMeta meta_;
  bool chat_;
  bool include_usage_;
  LogprobsAsked logprobs_;
  std::vector<TokenLogprobs> pending_logprobs_;  // consumed, not yet sent
  size_t text_offset_ = 0;
  bool started_ = false;
  int tool_calls_ = 0;
  Clock::time_point last_write_;
};

HttpResponse StreamResponse(StartedGeneration generation, ResponseMeta meta, bool chat,
                            bool include_usage, LogprobsAsked logprobs) {
  auto stream = std::make_shared<OpenAiStream>(std::move(generation), std::move(meta), chat,
                                               include_usage, logprobs);
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
    return StreamResponse(std::move(generation), std::move(meta), true, request.include_usage,
                          AskedOf(request, context));
  }
  const ChatOutput output = FinishGeneration(context, http, generation, "call_");
  const GenerationTotals& totals = generation.stream->totals();
  Json response =
      ChatCompletionJson(meta, output, totals, TimingsJson(totals, generation.params.spec));
  size_t text_offset = 0;
  AskedOf(request, context).Attach(response, true, generation.stream->TakeLogprobs(), text_offset);
  return GenerationResponse(response, totals);
}

HttpResponse HandleCompletions(const RouteContext& context, const HttpRequest& http) {
  const Json body = ParseJsonObject(http.body);
  GenerationRequest request = NewRequest(context);
  ParseCompletionBody(body, request);
  CheckModel(context, request.model);
  StartedGeneration generation = StartGeneration(context, http, request);
  ResponseMeta meta{RandomId("cmpl-"), UnixSeconds(), context.model_id};
  if (request.stream) {
    return StreamResponse(std::move(generation), std::move(meta), false, request.include_usage,
                          AskedOf(request, context));
  }
  const ChatOutput output = FinishGeneration(context, http, generation, "call_");
  const GenerationTotals& totals = generation.stream->totals();
  Json response =
      TextCompletionJson(meta, output.content, totals, TimingsJson(totals, generation.params.spec));
  size_t text_offset = 0;
  AskedOf(request, context).Attach(response, false, generation.stream->TakeLogprobs(), text_offset);
  return GenerationResponse(response, totals);
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
