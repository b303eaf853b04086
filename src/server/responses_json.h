// OpenAI's Responses API (POST /v1/responses) bodies ↔ native types: the request's input items,
// instructions, tools and text.format parsed into GenerationRequest; the response object and its
// output items (reasoning, message, function_call) built from the generated output; what a stored
// response keeps (its input as items) and whether a request asks for storing. The store itself
// is response_store.h; the route (responses_routes.cpp) looks up and stores.
#pragma once

#include <cstdint>
#include <string>

#include "server/generation_request.h"
#include "server/generation_stream.h"
#include "server/json_fields.h"

namespace tandem::server {

// Fills `request` (preset with the server's defaults) from a Responses body: model, input (a
// string, or message / function_call / function_call_output / reasoning items), instructions
// (a system message first), tools (flat function tools), tool_choice, parallel_tool_calls,
// text.format, max_output_tokens, temperature, top_p, stream, reasoning.effort, store and
// previous_response_id (type-checked only: ResponsesStoreRequested and the route act on them),
// metadata, user, truncation ("disabled") and tandem's speculative. Any other field, and any
// unknown member of an item or part, is Error(kInvalidArgument) naming it. `history` (an array
// of items: a stored conversation that previous_response_id names) comes between the
// instructions and the input; the instructions are the body's only, never carried over.
void ParseResponsesBody(const Json& body, GenerationRequest& request,
                        const Json& history = Json::array());

// Whether the response is to be stored: `store` as given, else `store_on` (OpenAI stores by
// default, so tandem does whenever its store is on). Without a store (`store_on` false),
// `store: true` and a previous_response_id are Error(kInvalidArgument) saying the store is off
// and how it is turned on.
bool ResponsesStoreRequested(const Json& body, bool store_on);

// The body's input as items: a string becomes one user message with an input_text part; an
// array is as given (ParseResponsesBody checked it).
Json InputItems(const Json& body);

// The request fields a response object repeats (instructions, max_output_tokens, temperature,
// top_p, tools, tool_choice, text, parallel_tool_calls, reasoning, metadata,
// previous_response_id, ...), with OpenAI's defaults for those the body left out; temperature,
// top_p and max_output_tokens as `request` (parsed from `body`) runs them; `stored` is the
// response's "store".
Json ResponsesEcho(const Json& body, const GenerationRequest& request, bool stored = false);

// Identity of one response: its id ("resp_..."), creation time and model.
struct ResponsesMeta {
  std::string id;
  int64_t created_at = 0;
  std::string model;
};

// Output items. `status` is "in_progress" or "completed"; ids are the caller's.
Json ReasoningItem(const std::string& id, const std::string& text, const char* status);
Json MessageItem(const std::string& id, const std::string& text, const char* status);
Json OutputTextPart(const std::string& text);  // {type: output_text, text, annotations: []}
Json ReasoningTextPart(const std::string& text);
Json FunctionCallItem(const std::string& id, const ToolCall& call, const char* status);

// The output items of a whole response: reasoning (when any), the message (when there is text,
// or nothing else), then one function_call per tool call. Item ids are made here. `cut_off`
// (the generation ran out of tokens): the last item, when it is the message or the reasoning,
// is "incomplete".
Json OutputItems(const ChatOutput& output, bool cut_off);

// {input_tokens, input_tokens_details: {cached_tokens}, output_tokens, output_tokens_details:
// {reasoning_tokens}, total_tokens}. Reasoning tokens are not counted apart (0).
Json ResponsesUsage(const GenerationTotals& totals);

// The response object around `output` (items). `totals` null: in progress (the stream's first
// events, no usage); else completed, or incomplete with reason "max_output_tokens" when the
// generation ran out of tokens.
Json ResponseObject(const ResponsesMeta& meta, const Json& echo, const Json& output,
                    const GenerationTotals* totals);

}  // namespace tandem::server
