// The generating routes' shared skeleton.
#include "server/generation_route.h"

#include <utility>

#include "server/api_error.h"
#include "server/ids.h"
#include "server/sse.h"
#include "server/timings.h"

namespace tandem::server {
namespace {

using Clock = std::chrono::steady_clock;

// Gives each tool call of `delta` a fresh id.
void NameToolCalls(ParsedDelta& delta, std::string_view id_prefix) {
  for (ChatPart& part : delta.parts) {
    if (part.kind == ChatPartKind::kToolCall) part.tool_call.id = RandomId(id_prefix);
  }
}

Json RunTimings(const GenerationRun& run) {
  return TimingsJson(run.stream().totals(), run.generation.params.spec);
}

// Drives one streamed response: called again and again by the connection's thread (BodyStreamer),
// each call waits up to kSsePoll for output and writes what is ready.
class SseGeneration {
 public:
  SseGeneration(std::shared_ptr<ApiDialect> dialect, GenerationRun run, ApiFlavor errors)
      : dialect_(std::move(dialect)), run_(std::move(run)), errors_(errors) {}

  bool Step(const ChunkWriter& write) {
    const SseStyle& style = dialect_->style();
    GenerationStream& stream = run_.stream();
    SseWriter out(write, style, stream, last_write_);
    if (!opened_ && style.open_at_once) {
      opened_ = true;
      last_write_ = Clock::now();
      return dialect_->Open(run_, out);
    }
    ParsedDelta delta = stream.Next(kSsePoll);
    NameToolCalls(delta, dialect_->tool_id_prefix());
    for (std::string& w : delta.warnings) run_.generation.warnings.push_back(std::move(w));
    delta.warnings.clear();
    if (!opened_) {
      // Nothing, not even a keep-alive, before the opening; what was read is held for it.
      AppendDelta(held_, std::move(delta));
      if (!dialect_->ReadyToOpen(stream)) return true;
      opened_ = true;
      delta = std::exchange(held_, {});
      if (!dialect_->Open(run_, out)) return false;
    }
    if (!dialect_->Parts(run_, out, delta)) return false;
    if (!stream.finished()) {
      if (Clock::now() - last_write_ > kSseKeepAlive && !dialect_->KeepAlive(out)) return false;
      return true;
    }
    const GenerationTotals& totals = stream.totals();
    if (totals.finish == FinishReason::kError) {
      out.Event(ErrorBody(errors_, 500, "generation failed: " + totals.error));
      if (style.done_marker) write(SseDone());
      return false;
    }
    LogWarnings(run_.generation, run_.generation.warnings);
    if (dialect_->Finish(run_, out, RunTimings(run_)) && style.done_marker) write(SseDone());
    return false;
  }

  // Completion tokens once finished (for the access log), else -1.
  int tokens() const { return run_.stream().finished_completion_tokens(); }

 private:
  std::shared_ptr<ApiDialect> dialect_;
  GenerationRun run_;
  const ApiFlavor errors_;  // the error event's shape
  bool opened_ = false;
  ParsedDelta held_;  // read before the opening
  Clock::time_point last_write_ = Clock::now();
};

// Waits for the whole output (cancelling it if the client leaves), then throws HttpError(503,
// Retry-After) if a shutdown ended it and HttpError(500) if it failed.
ChatOutput FinishGeneration(const HttpRequest& http, GenerationRun& run,
                            std::string_view id_prefix) {
  ChatOutput output;
  output.warnings = run.generation.warnings;
  ParsedDelta all = run.stream().ReadAll(http.client_gone);
  NameToolCalls(all, id_prefix);
  AccumulateOutput(all, output);
  LogWarnings(run.generation, output.warnings);
  const GenerationTotals& totals = run.stream().totals();
  if (totals.finish == FinishReason::kError) {
    if (totals.error == kShuttingDownError) {
      throw HttpError(503, "the server is shutting down", run.context.retry_after_seconds);
    }
    throw HttpError(500, "generation failed: " + totals.error);
  }
  return output;
}

}  // namespace

bool SseWriter::Send(std::string_view chunk) {
  if (!write_(chunk)) {
    stream_.Cancel();
    return false;
  }
  last_write_ = Clock::now();
  return true;
}

bool SseWriter::Event(const Json& event) {
  return Send(style_.named_events ? SseEvent(event.value("type", "error"), event) : SseData(event));
}

bool ApiDialect::KeepAlive(SseWriter& out) {
  return out.Send(SseComment("keep-alive"));
}

GenerationRequest ParseRequest(const RouteContext& context, const HttpRequest& http,
                               const std::function<void(const Json&, GenerationRequest&)>& parse) {
  const Json body = ParseJsonObject(http.body);
  GenerationRequest request = NewRequest(context);
  parse(body, request);
  CheckModel(context, request.model);
  return request;
}

HttpResponse ServeGeneration(const RouteContext& context, const HttpRequest& http,
                             std::shared_ptr<ApiDialect> dialect) {
  GenerationRequest request = ParseRequest(
      context, http, [&](const Json& body, GenerationRequest& r) { dialect->Parse(body, r); });
  return ServeParsedGeneration(context, http, std::move(dialect), std::move(request));
}

HttpResponse ApiDialect::WholeResponse(GenerationRun& run, const ChatOutput& output,
                                       const Json& timings) {
  return JsonResponse(200, Whole(run, output, timings));
}

HttpResponse ServeParsedGeneration(const RouteContext& context, const HttpRequest& http,
                                   std::shared_ptr<ApiDialect> dialect, GenerationRequest request) {
  CheckModel(context, request.model);
  StartedGeneration generation = StartGeneration(context, http, request);
  GenerationRun run{context, std::move(request), std::move(generation)};
  dialect->Admitted(run);
  if (run.request.stream) {
    auto sse = std::make_shared<SseGeneration>(std::move(dialect), std::move(run),
                                               FlavorForPath(http.path));
    HttpResponse response;
    response.content_type = "text/event-stream";
    response.headers = {{"Cache-Control", "no-cache"}};
    response.stream = [sse](const ChunkWriter& write) { return sse->Step(write); };
    response.tokens = [sse] { return sse->tokens(); };
    return response;
  }
  const ChatOutput output = FinishGeneration(http, run, dialect->tool_id_prefix());
  HttpResponse response = dialect->WholeResponse(run, output, RunTimings(run));
  response.tokens = [n = run.stream().totals().completion_tokens] { return n; };
  return response;
}

}  // namespace tandem::server
