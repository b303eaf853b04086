// OpenAI API bodies ↔ native types: /v1/chat/completions and /v1/completions requests parsed
// into GenerationRequest, responses and stream chunks built from the generated output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/generation_request.h"
#include "server/generation_stream.h"
#include "server/json_fields.h"
#include "tokenizer/chat_types.h"

namespace tandem::server {

// Every body, and every object in it that tandem reads, is checked against the fields its reader
// takes and the accepted no-ops (CheckFields): another field is a 400 naming its path.
//
// Fills `request` (preset with the server's defaults) from a chat completions body: model,
// messages (system/developer/user/assistant/tool; content as a string or text parts; assistant
// tool_calls and reasoning_content; tool_call_id), tools, tool_choice, stream, stream_options,
// max_tokens / max_completion_tokens, n (must be 1), stop, sampling fields, reasoning_effort and
// chat_template_kwargs.enable_thinking, speculative. Throws Error(kInvalidArgument) naming the
// field for wrong types, empty messages and unsupported features (non-text content, n > 1,
// logprobs, response_format other than text).
void ParseChatCompletionBody(const Json& body, GenerationRequest& request);

// The same for a completions body: model, prompt (a string, a token-id array, or a one-element
// array of either), stream, max_tokens, stop, sampling, speculative. Sets request.chat = false.
// `extra`: the fields a caller reads besides (llama-server's /completion: multimodal_data, ...).
void ParseCompletionBody(const Json& body, GenerationRequest& request, FieldNames extra = {});

// Tool-call arguments of `function` (its "arguments": JSON object text or an object; absent or
// "" is {}), as compact JSON text. Throws Error(kInvalidArgument) naming WHERE.arguments.
std::string ToolArgumentsText(const Json& function, const std::string& where);

// OpenAI's reasoning effort (chat `reasoning_effort`, Responses `reasoning.effort`): none and
// minimal turn thinking off; low, medium and high turn it on with a thought budget. Throws
// Error(kInvalidArgument) naming `field` for another value.
void ApplyReasoningEffort(const std::string& effort, const std::string& field,
                          GenerationRequest& request);

// Response identity shared by a response and all its chunks.
struct ResponseMeta {
  std::string id;
  int64_t created = 0;
  std::string model;
};

// "stop", "length" or "tool_calls".
const char* OpenAiFinishReason(const GenerationTotals& totals, bool made_tool_calls);
// {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details: {cached_tokens}}.
Json OpenAiUsage(const GenerationTotals& totals);
// {id, type: "function", function: {name, arguments}}, with "index" when index >= 0 (chunks).
Json OpenAiToolCall(const ToolCall& call, int index);

// chat.completion object; `timings` is attached as a top-level field.
Json ChatCompletionJson(const ResponseMeta& meta, const ChatOutput& output,
                        const GenerationTotals& totals, const Json& timings);
// chat.completion.chunk with one choice holding `delta` and `finish_reason` (null when not
// final).
Json ChatChunkJson(const ResponseMeta& meta, const Json& delta, const Json& finish_reason);
// text_completion object and its stream chunk.
Json TextCompletionJson(const ResponseMeta& meta, const std::string& text,
                        const GenerationTotals& totals, const Json& timings);
Json TextChunkJson(const ResponseMeta& meta, const std::string& text, const Json& finish_reason);

}  // namespace tandem::server
