// Incremental parser of Gemma 4 generated text into content, reasoning and tool calls.
//
// The model writes reasoning as `<|channel>thought\n…<channel|>` and calls tools as
// `<|tool_call>call:NAME{key:value,…}<tool_call|>`, where strings are wrapped in `<|"|>`, keys
// are bare and values nest as `{…}` objects and `[…]` arrays. The parser takes the generated text
// in arbitrary pieces (one token's text at a time, or everything at once) and returns what became
// certain: text is released as soon as it cannot be the start of a marker, tool calls when their
// close marker arrives. The concatenated result does not depend on how the text was split.
// Malformed or unterminated tool-call text comes back as content with a warning; nothing is
// dropped except the end-of-generation markers (`<eos>`, `<turn|>`, `<|tool_response>`).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/chat_types.h"

namespace tandem {

enum class ChatPartKind { kContent, kReasoning, kToolCall };

// A run of one kind of output. kContent/kReasoning carry `text`; kToolCall carries `tool_call`
// (id empty; `arguments` is compact JSON object text).
struct ChatPart {
  ChatPartKind kind = ChatPartKind::kContent;
  std::string text;
  ToolCall tool_call;
};

// What one Feed/Finish call produced, in generation order (adjacent text of one kind merged).
struct ParsedDelta {
  std::vector<ChatPart> parts;
  std::vector<std::string> warnings;  // each names the byte offset in the generated text

  std::string Content() const;    // all kContent text of this delta
  std::string Reasoning() const;  // all kReasoning text of this delta
  std::vector<ToolCall> ToolCalls() const;
  bool empty() const { return parts.empty() && warnings.empty(); }
};

// Streaming parser for one generated model turn. Not thread-safe; one per request.
class ChatOutputParser {
 public:
  // Consumes the next piece of generated text (any split, even inside a marker or a UTF-8
  // character). Text that could still become a marker, and an incomplete trailing UTF-8
  // character, are held back until more text or Finish() decides them.
  // Throws Error(kInvalidArgument) after Finish().
  ParsedDelta Feed(std::string_view text);

  // Ends the stream: releases held-back text, turns an unterminated tool call into content and
  // warns about it or about an unterminated thought channel. Call once.
  ParsedDelta Finish();

 private:
  enum class State { kContent, kChannelHeader, kReasoning, kToolCall };

  void Process(bool final, ParsedDelta& delta);
  // Handles a marker met in a text state (its bytes already removed from pending_).
  void OnMarker(std::string_view marker, size_t offset, ParsedDelta& delta);
  void EmitText(ChatPartKind kind, std::string_view text, ParsedDelta& delta);
  // Removes the first n bytes of pending_.
  void Consume(size_t n);

  State state_ = State::kContent;
  std::string pending_;      // generated text not yet decided
  size_t consumed_ = 0;      // stream offset of pending_[0]
  size_t block_start_ = 0;   // stream offset of the open `<|tool_call>` or `<|channel>`
  size_t call_scanned_ = 0;  // pending_ bytes known to hold no marker start (tool-call state)
  bool finished_ = false;
};

// Parses everything at once: Feed(text) then Finish(), merged.
ParsedDelta ParseChatOutput(std::string_view text);

// Parses the text between `<|tool_call>` and `<tool_call|>` (`call:NAME{…}`) into a call with
// JSON arguments. Returns nullopt and sets `*error` (if given) when the text is malformed.
std::optional<ToolCall> ParseToolCallText(std::string_view text, std::string* error);

}  // namespace tandem
