// The handler side of one engine request: a token queue filled by the engine thread, drained and
// decoded here.
#include "server/generation_stream.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <utility>

namespace tandem::server {
namespace {

// The engine's stop reason as the APIs distinguish it (the one place they are mapped).
FinishReason ToFinishReason(StopReason reason) {
  switch (reason) {
    case StopReason::kEog:
      return FinishReason::kEndOfTurn;
    case StopReason::kLength:
    case StopReason::kContext:
      return FinishReason::kLength;
    case StopReason::kStopString:
      return FinishReason::kStopString;
    case StopReason::kError:
      return FinishReason::kError;
    case StopReason::kNone:
    case StopReason::kStopped:
    case StopReason::kCancelled:
      break;
  }
  return FinishReason::kCancelled;
}

}  // namespace

// Shared with the engine callback, which may outlive the stream (it runs until the final event).
struct GenerationStream::Channel {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<int32_t> tokens;          // GUARDED_BY(mu): arrived, not yet taken
  std::vector<TokenLogprobs> logprobs;  // GUARDED_BY(mu): theirs, when asked for
  bool done = false;                    // GUARDED_BY(mu): the final event arrived
  GenerateResult result;                // GUARDED_BY(mu): set by the final event
  std::string error;                    // GUARDED_BY(mu)
  LiveSpec live;                        // GUARDED_BY(mu)
  int cached_prompt_tokens = -1;        // GUARDED_BY(mu): known with the first token (or the end)
  std::atomic<bool> cancelled{false};

  // Each round emits a token after the previous round is recorded, so one event sees at most
  // one new round.
  void Observe(const SpeculationStats& s) {  // REQUIRES(mu)
    SpeculationStats& seen = live.stats;
    if (s.rounds == seen.rounds + 1) {
      live.new_rounds.push_back({static_cast<int>(s.drafted - seen.drafted),
                                 static_cast<int>(s.accepted - seen.accepted)});
    }
    live.changed |= s.rounds != seen.rounds || s.plain_steps != seen.plain_steps;
    seen = s;
  }
};

void AppendDelta(ParsedDelta& into, ParsedDelta from) {
  for (ChatPart& part : from.parts) {
    if (part.kind != ChatPartKind::kToolCall && !into.parts.empty() &&
        into.parts.back().kind == part.kind) {
      into.parts.back().text += part.text;
    } else if (part.kind == ChatPartKind::kToolCall || !part.text.empty()) {
      into.parts.push_back(std::move(part));
    }
  }
  for (std::string& w : from.warnings) into.warnings.push_back(std::move(w));
}

void AccumulateOutput(const ParsedDelta& delta, ChatOutput& output) {
  for (const ChatPart& part : delta.parts) {
    switch (part.kind) {
      case ChatPartKind::kContent:
        output.content += part.text;
        break;
      case ChatPartKind::kReasoning:
        output.reasoning += part.text;
        break;
      case ChatPartKind::kToolCall:
        output.tool_calls.push_back(part.tool_call);
        break;
    }
  }
  for (const std::string& w : delta.warnings) output.warnings.push_back(w);
}

GenerationStream::GenerationStream(Backend& backend, const Tokenizer& tokenizer,
                                   std::vector<int32_t> prompt, const GenerateParams& params,
                                   StreamOptions options, std::vector<PromptMedia> media)
    : backend_(backend),
      tokenizer_(tokenizer),
      channel_(std::make_shared<Channel>()),
      chat_(options.chat),
      prompt_tokens_(static_cast<int>(prompt.size())),
      decoder_(tokenizer, /*render_special=*/options.chat),
      stops_(std::move(options.stop)),
      max_tool_calls_(options.max_tool_calls) {
  EngineRequest request;
  request.prompt = std::move(prompt);
  request.media = std::move(media);
  request.params = params;
  request.on_event = [channel = channel_](const EngineEvent& event) {
    {
      std::lock_guard<std::mutex> lock(channel->mu);
      if (event.final) {
        channel->done = true;
        if (event.result != nullptr) {
          channel->result = *event.result;
          channel->cached_prompt_tokens = event.result->cached_prompt_tokens;
          channel->Observe(event.result->spec);
        }
        channel->error = event.error;
      } else {
        channel->tokens.push_back(event.token);
        if (event.logprobs != nullptr) channel->logprobs.push_back(*event.logprobs);
        channel->cached_prompt_tokens = event.cached_prompt_tokens;
        if (event.spec != nullptr) channel->Observe(*event.spec);
      }
    }
    channel->cv.notify_all();
    return !channel->cancelled.load();
  };
  id_ = backend_.Submit(std::move(request));
}

GenerationStream::~GenerationStream() {
  if (!finished_) Cancel();
}

void GenerationStream::Cancel() {
  if (cancelled_) return;
  cancelled_ = true;
  channel_->cancelled.store(true);
  backend_.Cancel(id_);
}

void GenerationStream::EmitText(const std::string& text, ParsedDelta& delta) {
  if (text.empty()) return;  // an empty piece never reaches the parser
  if (chat_) {
    AppendDelta(delta, LimitToolCalls(parser_.Feed(text)));
  } else {
    ParsedDelta plain;
    plain.parts.push_back({ChatPartKind::kContent, text, {}});
    AppendDelta(delta, std::move(plain));
  }
}

ParsedDelta GenerationStream::LimitToolCalls(ParsedDelta parsed) {
  if (max_tool_calls_ <= 0) return parsed;
  for (size_t i = 0; i < parsed.parts.size(); ++i) {
    if (parsed.parts[i].kind != ChatPartKind::kToolCall) continue;
    if (tool_calls_ < max_tool_calls_) {
      if (++tool_calls_ < max_tool_calls_) continue;
      parsed.parts.resize(i + 1);  // the last call allowed: nothing after it is output
    } else {
      parsed.parts.resize(i);
    }
    tool_limit_ = true;
    Cancel();
    break;
  }
  return parsed;
}

void GenerationStream::Consume(int32_t token, const TokenLogprobs* logprobs, ParsedDelta& delta) {
  // Tokens the engine made before it saw a cancellation (stop string, tool-call limit).
  if (stop_matched_ || tool_limit_) return;
  ++consumed_tokens_;
  if (tokenizer_.IsEog(token)) return;
  if (logprobs != nullptr) logprobs_.push_back(*logprobs);
  token_ids_.push_back(token);
  const std::string text = stops_.Feed(decoder_.Push(token));
  EmitText(text, delta);
  if (stops_.stopped()) {
    stop_matched_ = true;
    Cancel();
  }
}

void GenerationStream::Finalize(ParsedDelta& delta) {
  if (tool_limit_) {  // the output ended with the last allowed tool call
    finished_ = true;
    return;
  }
  if (!stop_matched_) {
    std::string tail = stops_.Feed(decoder_.Flush());
    if (!stops_.stopped()) tail += stops_.Flush();
    stop_matched_ = stops_.stopped();
    EmitText(tail, delta);
  }
  if (chat_) AppendDelta(delta, parser_.Finish());
  finished_ = true;
}

ParsedDelta GenerationStream::Next(std::chrono::milliseconds timeout) {
  ParsedDelta delta;
  if (finished_) return delta;
  std::vector<int32_t> tokens;
  std::vector<TokenLogprobs> logprobs;
  bool done = false;
  {
    std::unique_lock<std::mutex> lock(channel_->mu);
    channel_->cv.wait_for(lock, timeout,
                          [&] { return !channel_->tokens.empty() || channel_->done; });
    tokens.swap(channel_->tokens);
    logprobs.swap(channel_->logprobs);
    done = channel_->done;
    cached_prompt_tokens_ = channel_->cached_prompt_tokens;
    if (done) {
      totals_.result = std::move(channel_->result);
      totals_.error = channel_->error;
    }
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    Consume(tokens[i], i < logprobs.size() ? &logprobs[i] : nullptr, delta);
  }
  if (!done) return delta;

  Finalize(delta);
  const GenerateResult& r = totals_.result;
  totals_.prompt_tokens = r.prompt_tokens > 0 ? r.prompt_tokens : prompt_tokens_;
  totals_.cached_prompt_tokens = r.cached_prompt_tokens;
  totals_.completion_tokens =
      stop_matched_ || tool_limit_ ? consumed_tokens_ : static_cast<int>(r.tokens.size());
  if (!totals_.error.empty()) {
    totals_.finish = FinishReason::kError;
  } else if (stop_matched_) {
    totals_.finish = FinishReason::kStopString;
    totals_.stop_string = stops_.matched();
  } else if (tool_limit_) {
    totals_.finish = FinishReason::kEndOfTurn;
  } else {
    totals_.finish = ToFinishReason(r.stop_reason);
  }
  return delta;
}

LiveSpec GenerationStream::TakeLiveSpec() {
  std::lock_guard<std::mutex> lock(channel_->mu);
  LiveSpec taken = channel_->live;
  channel_->live.changed = false;
  channel_->live.new_rounds.clear();
  return taken;
}

ParsedDelta GenerationStream::ReadAll(const std::function<bool()>& client_gone) {
  ParsedDelta all;
  while (!finished_) {
    AppendDelta(all, Next(std::chrono::milliseconds(200)));
    if (!finished_ && !cancelled_ && client_gone && client_gone()) Cancel();
  }
  return all;
}

}  // namespace tandem::server
