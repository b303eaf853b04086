// Gemma 4 chat format: conversation → prompt text, following Google's Gemma 4 chat templates.
#include "tokenizer/chat_format.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "base/error.h"

namespace tandem {
namespace {

using nlohmann::json;
namespace m = chat_marker;

// Deepest JSON nesting written (schemas, arguments); deeper input is rejected, not recursed.
constexpr int kMaxDepth = 64;

constexpr std::array<std::string_view, 3> kEndOfGeneration = {m::kEos, m::kTurnClose,
                                                              m::kToolResponseOpen};

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// Jinja's `trim` on ASCII whitespace.
std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// A message's content as the template writes it: the text trimmed, or its parts in order, each
// text part trimmed and each image its placeholder, nothing between them.
std::string MessageText(const ChatMessage& message) {
  if (message.parts.empty()) return std::string(Trim(message.content));
  std::string out;
  for (const ContentPart& part : message.parts) {
    if (part.type == ContentType::kImage) {
      out += m::kImage;
    } else if (part.type == ContentType::kAudio) {
      out += m::kAudio;
    } else {
      out += Trim(part.text);
    }
  }
  return out;
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The templates' `strip_thinking`: split on `<channel|>`, keep each part up to its first
// `<|channel>`, then trim. Removes whole thought blocks, a dangling unclosed block at the end
// and stray close markers.
std::string StripThinking(std::string_view text) {
  std::string result;
  while (true) {
    size_t close = text.find(m::kChannelClose);
    std::string_view part = text.substr(0, close);
    result.append(part.substr(0, part.find(m::kChannelOpen)));
    if (close == std::string_view::npos) break;
    text.remove_prefix(close + m::kChannelClose.size());
  }
  return std::string(Trim(result));
}

// Python truthiness of a JSON value, as the templates test fields with `{% if value[...] %}`.
bool Truthy(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      return false;
    case json::value_t::boolean:
      return v.get<bool>();
    case json::value_t::string:
      return !v.get_ref<const std::string&>().empty();
    case json::value_t::array:
    case json::value_t::object:
      return !v.empty();
    case json::value_t::number_float:
      return v.get<double>() != 0.0;
    default:
      return v != 0;
  }
}

// `obj[key]`, or null when `obj` is not an object or lacks the key.
const json& Field(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// How `{{ value }}` prints a scalar: strings raw, everything else as JSON text.
std::string ScalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Object keys in Jinja `dictsort` order (case-insensitive; exact order breaks ties).
std::vector<std::string> SortedKeys(const json& obj) {
  std::vector<std::string> keys;
  for (auto it = obj.begin(); it != obj.end(); ++it) keys.push_back(it.key());
  std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    std::string la = Lower(a), lb = Lower(b);
    return la != lb ? la < lb : a < b;
  });
  return keys;
}

void CheckDepth(int depth) {
  if (depth > kMaxDepth) {
    Fail(ErrorKind::kInvalidArgument,
         "chat template: JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
  }
}

void AppendQuoted(std::string& out, std::string_view text) {
  out += m::kQuote;
  out += text;
  out += m::kQuote;
}

// The templates' `format_argument`: strings in `<|"|>`, objects with keys sorted (quoted when
// `quote_keys`), arrays, and other scalars as JSON text (null prints as `null`).
void AppendArgument(std::string& out, const json& v, bool quote_keys, int depth) {
  CheckDepth(depth);
  if (v.is_string()) {
    AppendQuoted(out, v.get_ref<const std::string&>());
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const std::string& key : SortedKeys(v)) {
      if (!first) out += ',';
      first = false;
      if (quote_keys) {
        AppendQuoted(out, key);
      } else {
        out += key;
      }
      out += ':';
      AppendArgument(out, v.at(key), quote_keys, depth + 1);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) out += ',';
      AppendArgument(out, v[i], quote_keys, depth + 1);
    }
    out += ']';
  } else {
    out += ScalarText(v);
  }
}

// `[<|"|>a<|"|>,<|"|>b<|"|>]` for a `required` list.
void AppendNameList(std::string& out, const json& list) {
  out += '[';
  if (list.is_array()) {
    for (size_t i = 0; i < list.size(); ++i) {
      if (i > 0) out += ',';
      AppendQuoted(out, ScalarText(list[i]));
    }
  }
  out += ']';
}

// A schema's `type` upper-cased. For a type list (["string","null"]) the first non-null entry;
// the official template would print the Python list, which is never what a model has seen.
std::string EffectiveType(const json& type) {
  if (type.is_string()) return Upper(type.get_ref<const std::string&>());
  if (type.is_array()) {
    for (const json& t : type) {
      if (t.is_string() && Lower(t.get_ref<const std::string&>()) != "null") {
        return Upper(t.get_ref<const std::string&>());
      }
    }
  }
  return "";
}

bool IsStandardSchemaKey(std::string_view key) {
  return key == "description" || key == "type" || key == "properties" || key == "required" ||
         key == "nullable";
}

void AppendParameters(std::string& out, const json& properties, bool filter_keys, int depth);

// The `items:{…}` block of an ARRAY property.
void AppendItems(std::string& out, const json& items, int depth) {
  out += "items:{";
  bool first = true;
  for (const std::string& key : SortedKeys(items)) {
    const json& value = items.at(key);
    if (value.is_null()) continue;
    if (!first) out += ',';
    first = false;
    if (key == "properties") {
      out += "properties:{";
      if (value.is_object()) AppendParameters(out, value, false, depth + 1);
      out += '}';
    } else if (key == "required") {
      out += "required:";
      AppendNameList(out, value);
    } else if (key == "type") {
      out += "type:";
      if (value.is_string()) {
        AppendQuoted(out, Upper(value.get_ref<const std::string&>()));
      } else {
        json upper = json::array();
        for (const json& t : value) upper.push_back(Upper(ScalarText(t)));
        AppendArgument(out, upper, true, depth + 1);
      }
    } else {
      out += key;
      out += ':';
      AppendArgument(out, value, true, depth + 1);
    }
  }
  out += '}';
}

// The templates' `format_parameters`: one `NAME:{description,enum|items,nullable,properties,
// required,type}` entry per property, sorted by name. With `filter_keys` (an OBJECT without
// `properties`, whose own keys are its properties) the JSON-schema keywords are skipped.
// Properties whose schema is not an object are skipped.
void AppendParameters(std::string& out, const json& properties, bool filter_keys, int depth) {
  CheckDepth(depth);
  bool first = true;
  for (const std::string& key : SortedKeys(properties)) {
    if (filter_keys && IsStandardSchemaKey(key)) continue;
    const json& value = properties.at(key);
    if (!value.is_object()) continue;
    if (!first) out += ',';
    first = false;
    out += key;
    out += ":{";
    bool add_comma = false;
    auto comma = [&] {
      if (add_comma) out += ',';
      add_comma = true;
    };
    const json& description = Field(value, "description");
    if (Truthy(description)) {
      comma();
      out += "description:";
      AppendQuoted(out, ScalarText(description));
    }
    const std::string type = EffectiveType(Field(value, "type"));
    if (type == "STRING") {
      const json& values = Field(value, "enum");
      if (Truthy(values)) {
        comma();
        out += "enum:";
        AppendArgument(out, values, true, depth + 1);
      }
    } else if (type == "ARRAY") {
      const json& items = Field(value, "items");
      if (items.is_object() && !items.empty()) {
        comma();
        AppendItems(out, items, depth + 1);
      }
    }
    if (Truthy(Field(value, "nullable"))) {
      comma();
      out += "nullable:true";
    }
    if (type == "OBJECT") {
      const json& nested = Field(value, "properties");
      comma();
      out += "properties:{";
      if (nested.is_object()) {
        AppendParameters(out, nested, false, depth + 1);
      } else {
        AppendParameters(out, value, true, depth + 1);
      }
      out += '}';
      const json& required = Field(value, "required");
      if (Truthy(required)) {
        comma();
        out += "required:";
        AppendNameList(out, required);
      }
    }
    comma();
    out += "type:";
    AppendQuoted(out, type);
    out += '}';
  }
}

const char* TurnRoleName(ChatRole role) {
  switch (role) {
    case ChatRole::kSystem:
      return "system";
    case ChatRole::kUser:
      return "user";
    case ChatRole::kAssistant:
      return "model";
    case ChatRole::kTool:
      return "tool";
  }
  return "user";
}

std::string MessageContext(size_t index) {
  return "chat message " + std::to_string(index);
}

// `<|tool_call>call:NAME{key:value,…}<tool_call|>` with keys sorted and left bare.
void AppendToolCall(std::string& out, const ToolCall& call, size_t index) {
  json args = json::object();
  if (!Trim(call.arguments).empty()) args = json::parse(call.arguments, nullptr, false);
  if (!args.is_object()) {
    Fail(ErrorKind::kInvalidArgument, MessageContext(index) + ": arguments of tool call '" +
                                          call.name + "' are not a JSON object");
  }
  out += m::kToolCallOpen;
  out += "call:";
  out += call.name;
  try {
    AppendArgument(out, args, false, 0);
  } catch (const Error& e) {
    Fail(ErrorKind::kInvalidArgument, MessageContext(index) + ": " + e.what());
  }
  out += m::kToolCallClose;
}

// `<|tool_response>response:NAME{value:<|"|>TEXT<|"|>}<tool_response|>`.
void AppendToolResponse(std::string& out, const ChatMessage& result,
                        const std::vector<ToolCall>& calls) {
  std::string name = result.name.empty() ? "unknown" : result.name;
  if (!result.tool_call_id.empty()) {
    for (const ToolCall& call : calls) {
      if (call.id == result.tool_call_id) {
        name = call.name;
        break;
      }
    }
  }
  out += m::kToolResponseOpen;
  out += "response:";
  out += name;
  out += "{value:";
  AppendQuoted(out, result.content);
  out += '}';
  out += m::kToolResponseClose;
}

// True when every message after `index` is a tool message or the next other one is from the
// assistant: a model turn ending in tool results then stays open for it.
bool ModelTurnContinues(std::span<const ChatMessage> messages, size_t index) {
  for (size_t j = index + 1; j < messages.size(); ++j) {
    if (messages[j].role != ChatRole::kTool) return messages[j].role == ChatRole::kAssistant;
  }
  return true;
}

}  // namespace

ChatRole ParseChatRole(std::string_view name) {
  if (name == "system" || name == "developer") return ChatRole::kSystem;
  if (name == "user") return ChatRole::kUser;
  if (name == "assistant" || name == "model") return ChatRole::kAssistant;
  if (name == "tool") return ChatRole::kTool;
  Fail(ErrorKind::kInvalidArgument, "unknown chat role '" + std::string(name) + "'");
}

std::span<const std::string_view> EndOfGenerationTokenTexts() {
  return kEndOfGeneration;
}

bool IsEndOfGenerationTokenText(std::string_view token_text) {
  return std::find(kEndOfGeneration.begin(), kEndOfGeneration.end(), token_text) !=
         kEndOfGeneration.end();
}

std::string RenderToolDeclaration(const ToolSpec& tool) {
  std::string out = "declaration:" + tool.name + "{description:";
  AppendQuoted(out, tool.description);
  const json& params = tool.parameters;
  if (Truthy(params)) {
    if (!params.is_object()) {
      Fail(ErrorKind::kInvalidArgument,
           "tool '" + tool.name + "': parameters must be a JSON-schema object");
    }
    std::vector<std::string> parts;
    const json& properties = Field(params, "properties");
    if (Truthy(properties)) {
      if (!properties.is_object()) {
        Fail(ErrorKind::kInvalidArgument,
             "tool '" + tool.name + "': parameters.properties must be an object");
      }
      std::string part = "properties:{";
      try {
        AppendParameters(part, properties, false, 0);
      } catch (const Error& e) {
        Fail(ErrorKind::kInvalidArgument, "tool '" + tool.name + "': " + e.what());
      }
      parts.push_back(part + '}');
    }
    const json& required = Field(params, "required");
    if (Truthy(required)) {
      std::string part = "required:";
      AppendNameList(part, required);
      parts.push_back(part);
    }
    const std::string type = EffectiveType(Field(params, "type"));
    if (!type.empty()) {
      std::string part = "type:";
      AppendQuoted(part, type);
      parts.push_back(part);
    }
    // The template writes each part followed by a comma and only `type` closes the braces;
    // joining keeps its output when `type` is present and stays balanced when it is not.
    out += ",parameters:{";
    for (size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) out += ',';
      out += parts[i];
    }
    out += '}';
  }
  out += '}';
  return out;
}

std::string RenderChat(std::span<const ChatMessage> messages, std::span<const ToolSpec> tools,
                       const ChatRenderOptions& options) {
  std::string out;
  if (options.add_bos) out += m::kBos;

  size_t first = 0;
  const bool has_system = !messages.empty() && messages[0].role == ChatRole::kSystem;
  if (options.thinking || !tools.empty() || has_system) {
    out += m::kTurnOpen;
    out += "system\n";
    if (options.thinking) {
      out += m::kThink;
      out += '\n';
    }
    if (has_system) {
      out += MessageText(messages[0]);
      first = 1;
    }
    for (const ToolSpec& tool : tools) {
      out += m::kToolOpen;
      out += RenderToolDeclaration(tool);
      out += m::kToolClose;
    }
    out += m::kTurnClose;
    out += '\n';
  }

  // Reasoning is written back only after the last user message (interleaved thinking).
  size_t after_last_user = first;
  for (size_t i = first; i < messages.size(); ++i) {
    if (messages[i].role == ChatRole::kUser) after_last_user = i + 1;
  }

  bool turn_open = false;           // a model turn ended in tool results, left for the model
  bool ended_in_tool_call = false;  // the last message made calls no result answered
  size_t tool_results_end = first;  // tool messages before this index were written
  for (size_t i = first; i < messages.size(); ++i) {
    const ChatMessage& message = messages[i];
    if (message.role == ChatRole::kTool) {
      if (i >= tool_results_end) {
        Fail(
            ErrorKind::kInvalidArgument,
            MessageContext(i) + ": a tool result must follow an assistant message with tool calls");
      }
      continue;
    }
    const bool is_model = message.role == ChatRole::kAssistant;
    if (!is_model && !message.tool_calls.empty()) {
      Fail(ErrorKind::kInvalidArgument,
           MessageContext(i) + ": only assistant messages can make tool calls");
    }
    if (!turn_open) {
      out += m::kTurnOpen;
      out += TurnRoleName(message.role);
      out += '\n';
    }
    turn_open = false;
    ended_in_tool_call = false;

    if (is_model && !message.reasoning.empty() && !message.tool_calls.empty() &&
        i >= after_last_user) {
      out += m::kChannelOpen;
      out += m::kThoughtChannel;
      out += '\n';
      out += message.reasoning;
      out += '\n';
      out += m::kChannelClose;
    }

    bool wrote_results = false;
    if (!message.tool_calls.empty()) {
      for (const ToolCall& call : message.tool_calls) AppendToolCall(out, call, i);
      size_t j = i + 1;
      for (; j < messages.size() && messages[j].role == ChatRole::kTool; ++j) {
        AppendToolResponse(out, messages[j], message.tool_calls);
        wrote_results = true;
      }
      tool_results_end = j;
    }

    const std::string text =
        is_model && message.parts.empty() ? StripThinking(message.content) : MessageText(message);
    out += text;

    if (!message.tool_calls.empty() && !wrote_results) {
      // The model's own end-of-turn after a call; the template writes it like this.
      out += m::kToolResponseOpen;
      ended_in_tool_call = true;
    } else if (wrote_results && text.empty() && ModelTurnContinues(messages, i)) {
      turn_open = true;
    } else {
      out += m::kTurnClose;
      out += '\n';
    }
  }

  if (options.add_generation_prompt && !turn_open && !ended_in_tool_call) {
    out += m::kTurnOpen;
    out += "model\n";
    if (options.empty_thought_when_thinking_off && !options.thinking) {
      out += m::kChannelOpen;
      out += m::kThoughtChannel;
      out += '\n';
      out += m::kChannelClose;
    }
  }
  return out;
}

}  // namespace tandem
