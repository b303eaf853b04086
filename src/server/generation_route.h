// The one skeleton of the generating routes (OpenAI chat and completions, Anthropic messages,
// llama-server's /completion). A route is an ApiDialect: its parser and its response shape.
// Everything else is here, once: the body parsed into the one GenerationRequest, the model
// checked, the request admitted (StartGeneration: prompt, parameters, constraint, submit), then
// the answer, whole or streamed as server-sent events: waiting, keep-alives, a client that
// leaves, a failed generation, tool-call ids, warnings, timings and the access log's count.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "server/generation_request.h"
#include "server/generation_stream.h"
#include "server/http_types.h"
#include "server/json_fields.h"
#include "server/route_context.h"

namespace tandem::server {

// An admitted request, as a response shape sees it.
struct GenerationRun {
  RouteContext context;  // a copy: a streamed response outlives the handler's call
  GenerationRequest request;
  StartedGeneration generation;  // the stream, engine parameters, prompt ids, warnings so far

  GenerationStream& stream() const { return *generation.stream; }
};

// How a dialect frames its stream.
struct SseStyle {
  bool named_events = false;  // "event: TYPE" before each payload (its "type"); else "data:" only
  bool done_marker = false;   // "data: [DONE]" ends the stream, a failed one too (OpenAI)
  // Open() on the first call, before any token is read (OpenAI's role chunk); else on the first
  // read after which ReadyToOpen() holds (what was read before goes to the first Parts()).
  bool open_at_once = false;
};

// The writer a dialect's stream hooks get.
class SseWriter {
 public:
  using Clock = std::chrono::steady_clock;

  SseWriter(const ChunkWriter& write, const SseStyle& style, GenerationStream& stream,
            Clock::time_point& last_write)
      : write_(write), style_(style), stream_(stream), last_write_(last_write) {}

  // Writes one chunk as it is and notes when; false, and the generation cancelled, once the
  // client is gone.
  bool Send(std::string_view chunk);
  // One event in the dialect's framing (SseData, or SseEvent named by the event's "type").
  bool Event(const Json& event);

 private:
  const ChunkWriter& write_;
  const SseStyle& style_;
  GenerationStream& stream_;
  Clock::time_point& last_write_;
};

// An API dialect: how its requests are read and its responses written. One object per request
// (its stream hooks keep the response's state). Stream hooks return false once a write failed.
class ApiDialect {
 public:
  explicit ApiDialect(SseStyle style, std::string tool_id_prefix = "call_")
      : style_(style), tool_id_prefix_(std::move(tool_id_prefix)) {}
  virtual ~ApiDialect() = default;
  ApiDialect(const ApiDialect&) = delete;
  ApiDialect& operator=(const ApiDialect&) = delete;

  const SseStyle& style() const { return style_; }
  // Tool calls in its responses get RandomId(tool_id_prefix()) ids.
  const std::string& tool_id_prefix() const { return tool_id_prefix_; }

  // The thin layer: fills `request` (preset with the server's defaults) from the body. Throws
  // Error(kInvalidArgument) naming the field.
  virtual void Parse(const Json& body, GenerationRequest& request) = 0;
  // The request was admitted (the response's id and creation time are taken here).
  virtual void Admitted(const GenerationRun& run) { (void)run; }

  // The body of a whole (non-streaming) response. `timings` is TimingsJson of the run.
  virtual Json Whole(GenerationRun& run, const ChatOutput& output, const Json& timings) = 0;
  // The whole response: Whole's body as JSON with status 200, unless the dialect answers in
  // another media type (transcriptions in text, SRT or WebVTT).
  virtual HttpResponse WholeResponse(GenerationRun& run, const ChatOutput& output,
                                     const Json& timings);

  // A streamed response (GenerationRequest::stream): Open once, then Parts after every read (the
  // delta is often empty; its tool calls have ids), KeepAlive when nothing was written for
  // kSseKeepAlive, and at the end Finish with the timings (the run's warnings logged). A failed
  // generation ends with an error event instead, in the path's error shape (FlavorForPath).
  virtual bool ReadyToOpen(const GenerationStream& stream) const {
    (void)stream;
    return true;
  }
  virtual bool Open(GenerationRun& run, SseWriter& out) {
    (void)run, (void)out;
    return true;
  }
  virtual bool Parts(GenerationRun& run, SseWriter& out, const ParsedDelta& delta) = 0;
  virtual bool KeepAlive(SseWriter& out);  // an SSE comment
  virtual bool Finish(GenerationRun& run, SseWriter& out, Json timings) = 0;

 private:
  const SseStyle style_;
  const std::string tool_id_prefix_;
};

// A route's request: the body parsed (within the JSON limits) by `parse` into a request preset
// with the server's defaults (NewRequest), and its model checked (CheckModel).
GenerationRequest ParseRequest(const RouteContext& context, const HttpRequest& http,
                               const std::function<void(const Json&, GenerationRequest&)>& parse);

// Parses, admits and answers one generating request in `dialect`'s shape. Throws what
// ParseRequest and StartGeneration throw, and for a whole response HttpError(503) when a shutdown
// ended the generation and HttpError(500) when it failed.
HttpResponse ServeGeneration(const RouteContext& context, const HttpRequest& http,
                             std::shared_ptr<ApiDialect> dialect);
// The same for a request its route already read (a body that is not JSON: the audio routes'
// multipart forms); the model is checked here.
HttpResponse ServeParsedGeneration(const RouteContext& context, const HttpRequest& http,
                                   std::shared_ptr<ApiDialect> dialect, GenerationRequest request);

}  // namespace tandem::server
