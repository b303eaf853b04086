// Anthropic Messages API bodies ↔ native types: /v1/messages and /v1/messages/count_tokens
// requests parsed into GenerationRequest, message objects and stream events built from output.
#pragma once

#include <string>

#include "server/generation_request.h"
#include "server/generation_stream.h"
#include "server/json_fields.h"

namespace tandem::server {

// Fills `request` (preset with the server's defaults) from a messages body: model, max_tokens
// (required, >= 1), system (a string or text blocks), messages (user/assistant; content a string
// or blocks: text, tool_use, tool_result, thinking, redacted_thinking), tools
// ({name, description, input_schema}), tool_choice (auto, any, tool, none), thinking
// ({type: enabled|disabled}), stop_sequences, stream, temperature, top_p, top_k, speculative.
// tool_result blocks become tool messages placed before the user's text of the same turn.
// Throws Error(kInvalidArgument) naming the field.
void ParseMessagesBody(const Json& body, GenerationRequest& request);

// The same for count_tokens: max_tokens is not required.
void ParseCountTokensBody(const Json& body, GenerationRequest& request);

// "end_turn", "max_tokens", "stop_sequence" or "tool_use".
const char* AnthropicStopReason(const GenerationTotals& totals, bool made_tool_calls);
// {input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens}; input
// tokens count the prompt tokens not read from the cache, as Anthropic does.
Json AnthropicUsage(const GenerationTotals& totals);

// A message object: {id, type: "message", role: "assistant", model, content: [thinking, text,
// tool_use blocks], stop_reason, stop_sequence, usage} plus tandem's `timings`.
Json MessageJson(const std::string& id, const std::string& model, const ChatOutput& output,
                 const GenerationTotals& totals, const Json& timings);

// Stream events (the data of each SSE event; its "type" is also the SSE event name).
// input_tokens excludes the cached_tokens the prompt cache served (as message_delta's usage).
Json MessageStartEvent(const std::string& id, const std::string& model, int input_tokens,
                       int cached_tokens);
Json ContentBlockStartEvent(int index, const Json& block);
Json ContentBlockDeltaEvent(int index, const Json& delta);
Json ContentBlockStopEvent(int index);
Json MessageDeltaEvent(const GenerationTotals& totals, bool made_tool_calls, const Json& timings);
Json MessageStopEvent();
Json PingEvent();
// {type: "tool_use", id, name, input: {...}} (input parsed from the call's JSON arguments).
Json ToolUseBlock(const ToolCall& call);

}  // namespace tandem::server
