// Plain data types of a chat conversation: messages, tool calls and tool declarations.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem {

// Who wrote a message. "developer" (OpenAI) maps to kSystem; "model" is an alias of kAssistant.
enum class ChatRole { kSystem, kUser, kAssistant, kTool };

// Parses an API role name ("system", "developer", "user", "assistant", "model", "tool").
// Throws Error(kInvalidArgument) naming the role for anything else.
ChatRole ParseChatRole(std::string_view name);

// One function call made by the assistant.
struct ToolCall {
  std::string id;         // optional; tool messages refer to it through tool_call_id
  std::string name;       // function name
  std::string arguments;  // JSON object text, e.g. {"city":"Paris"}; "" means {}
};

// One part of a message's content: text, or a media item of the request (an image or a
// recording), which the chat format writes as its placeholder and the prompt builder expands
// into soft tokens.
enum class ContentType { kText, kImage, kAudio };
struct ContentPart {
  ContentType type = ContentType::kText;
  std::string text;  // kText
  int media = -1;    // kImage: index into the request's images; kAudio: into its audio
};

// One message of a conversation.
struct ChatMessage {
  ChatRole role = ChatRole::kUser;
  std::string content;               // text; for kTool the function's result
  std::vector<ContentPart> parts;    // when not empty: the content, in order (`content` unused)
  std::string reasoning;             // kAssistant: the thought text, without channel markers
  std::vector<ToolCall> tool_calls;  // kAssistant: calls made in this message
  std::string tool_call_id;          // kTool: the id of the call this result answers
  std::string name;                  // kTool: function name, used when tool_call_id matches nothing
};

// A function the model may call, as declared by the API request.
struct ToolSpec {
  std::string name;
  std::string description;
  nlohmann::ordered_json parameters;  // JSON-schema object, in the request's key order, or null
};

}  // namespace tandem
