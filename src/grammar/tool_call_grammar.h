// Forced tool use as a grammar: the model's answer is one or more Gemma 4 tool calls
// `<|tool_call>call:NAME{key:value,...}<tool_call|>` to the given tools, each call's arguments
// valid against its tool's parameter schema (compiled in JsonSyntax::kGemmaToolCall), and then
// the end of generation. OpenAI tool_choice "required" or a named function, Anthropic "any" or a
// named tool.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/chat_format.h"
#include "tokenizer/chat_types.h"

namespace tandem {

// The markup tokens a tool-call grammar writes (TokenVocabulary::FromTokenizer's `markup`).
inline constexpr std::array<std::string_view, 3> kToolCallMarkup = {
    chat_marker::kToolCallOpen, chat_marker::kToolCallClose, chat_marker::kQuote};

// GBNF of the calls. `single`: exactly one call (parallel_tool_calls false /
// disable_parallel_tool_use), else one or more. Throws Error(kInvalidArgument) for no tools or a
// name the syntax cannot carry, or a parameter schema that does not compile ("tools[i] ('NAME')
// parameters: " and the JsonSchemaError message, which names the keyword and its JSON path).
std::string ToolCallGbnf(const std::vector<ToolSpec>& tools, bool single);

}  // namespace tandem
