// One submitted request seen from an HTTP handler thread: the engine thread only appends token
// ids to a queue (it never waits on a socket); the handler takes them, decodes them, applies stop
// strings and, for chat requests, parses content / reasoning / tool calls as they become certain.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/request.h"
#include "server/backend.h"
#include "tokenizer/chat_parser.h"
#include "tokenizer/stop_strings.h"
#include "tokenizer/streaming_decoder.h"
#include "tokenizer/tokenizer.h"

namespace tandem::server {

// Why generation ended, as the APIs distinguish it.
enum class FinishReason {
  kEndOfTurn,   // the model emitted an end-of-generation token
  kStopString,  // a client stop string matched (it is not part of the output)
  kLength,      // max_tokens or the context ran out
  kCancelled,   // the client went away or the server shut down
  kError,       // the engine failed the request
};

struct StreamOptions {
  bool chat = false;              // parse the Gemma 4 chat output; else plain text
  std::vector<std::string> stop;  // stop strings
  int max_tool_calls = 0;         // > 0: generation ends after this many tool calls
};

// Known once the stream has finished.
struct GenerationTotals {
  FinishReason finish = FinishReason::kEndOfTurn;
  std::string stop_string;  // the stop string that matched (kStopString)
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;
  int completion_tokens = 0;  // tokens generated up to the end (or the stop string)
  GenerateResult result;      // the engine's result: timings, speculative statistics
  std::string error;          // kError: the engine's message
};

// A running request's speculation as the engine reported it with its tokens.
struct LiveSpec {
  bool changed = false;    // rounds or plain steps happened since the previous TakeLiveSpec()
  SpeculationStats stats;  // so far
  std::vector<std::array<int, 2>> new_rounds;  // {drafted, accepted} of each round since then
};

// Appends `from` to `into`, merging adjacent text parts of one kind.
void AppendDelta(ParsedDelta& into, ParsedDelta from);

// The whole output of one generation, as non-streaming responses return it.
struct ChatOutput {
  std::string content;
  std::string reasoning;
  std::vector<ToolCall> tool_calls;   // ids assigned
  std::vector<std::string> warnings;  // tool-call text that could not be parsed
};

// Adds the parts of `delta` to `output` (tool calls with the ids they have).
void AccumulateOutput(const ParsedDelta& delta, ChatOutput& output);

// Not thread-safe: one handler thread drives it. The backend and tokenizer must outlive it.
class GenerationStream {
 public:
  // Submits the request. Throws what Backend::Submit throws (nothing is left running then).
  GenerationStream(Backend& backend, const Tokenizer& tokenizer, std::vector<int32_t> prompt,
                   const GenerateParams& params, StreamOptions options,
                   std::vector<PromptMedia> media = {});
  // Cancels the request if it has not finished; returns without waiting for the engine.
  ~GenerationStream();
  GenerationStream(const GenerationStream&) = delete;
  GenerationStream& operator=(const GenerationStream&) = delete;

  // Waits up to `timeout` for tokens or the end and returns the output they completed (often
  // empty: text that may still become a marker or a stop string is held back). After the final
  // event, returns the rest and sets finished().
  ParsedDelta Next(std::chrono::milliseconds timeout);
  // Everything up to the end, for non-streaming responses; cancels the request (and still waits
  // for its end) once `client_gone` returns true, polled every 200 ms.
  ParsedDelta ReadAll(const std::function<bool()>& client_gone = {});
  // The logprobs of the tokens consumed since the previous call (params.top_logprobs >= 0): every
  // generated token but an end-of-generation one and those after a stop string.
  std::vector<TokenLogprobs> TakeLogprobs() { return std::exchange(logprobs_, {}); }
  // The ids of the same tokens (llama-server's `tokens`), consumed since the previous call.
  std::vector<int32_t> TakeTokens() { return std::exchange(token_ids_, {}); }
  // The statistics so far and the rounds completed since the previous call (live panels).
  LiveSpec TakeLiveSpec();
  // Stops generation at the engine's next step (client disconnect). Idempotent.
  void Cancel();

  bool finished() const { return finished_; }
  int prompt_tokens() const { return prompt_tokens_; }
  // Prompt tokens the engine's cache served, known once Next() returned after the first token
  // (or the end); -1 before.
  int cached_prompt_tokens() const { return cached_prompt_tokens_; }
  // Valid once finished().
  const GenerationTotals& totals() const { return totals_; }
  // totals().completion_tokens once finished(), else -1 (the access log's "unknown").
  int finished_completion_tokens() const { return finished_ ? totals_.completion_tokens : -1; }

 private:
  struct Channel;

  void Consume(int32_t token, const TokenLogprobs* logprobs, ParsedDelta& delta);
  // Drops tool calls beyond max_tool_calls_ (and what follows the last allowed one), cancelling.
  ParsedDelta LimitToolCalls(ParsedDelta parsed);
  void EmitText(const std::string& text, ParsedDelta& delta);
  void Finalize(ParsedDelta& delta);

  Backend& backend_;
  const Tokenizer& tokenizer_;
  std::shared_ptr<Channel> channel_;
  uint64_t id_ = 0;
  bool chat_;
  int prompt_tokens_;
  int cached_prompt_tokens_ = -1;
  StreamingDecoder decoder_;
  StopStringFilter stops_;
  ChatOutputParser parser_;
  int consumed_tokens_ = 0;
  bool stop_matched_ = false;
  int max_tool_calls_ = 0;
  int tool_calls_ = 0;
  bool tool_limit_ = false;  // max_tool_calls_ calls were made: the rest is dropped
  bool cancelled_ = false;
  bool finished_ = false;
  GenerationTotals totals_;
  std::vector<TokenLogprobs> logprobs_;  // consumed, not yet taken
  std::vector<int32_t> token_ids_;       // consumed, not yet taken
};

}  // namespace tandem::server
