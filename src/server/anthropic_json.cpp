// Anthropic request parsing and message / stream-event building.
#include "server/anthropic_json.h"

#include <limits>
#include <string_view>

#include "base/error.h"
#include "server/media_fields.h"
#include "server/request_fields.h"

namespace tandem::server {
namespace {

[[noreturn]] void Unsupported(const std::string& where, const std::string& what) {
  Fail(ErrorKind::kInvalidArgument, where + ": " + what + " is not supported (tandem serves text)");
}

// {"type": "ephemeral"} with an optional "ttl": a prompt-caching breakpoint. tandem reuses every
// cached prefix without breakpoints, so it changes nothing.
bool IsCacheControl(const Json& v) {
  if (!v.is_object() || v.value("type", Json()) != "ephemeral") return false;
  for (const auto& [key, value] : v.items()) {
    if (key != "type" && !(key == "ttl" && value.is_string())) return false;
  }
  return true;
}

bool IsAnthropicMetadata(const Json& v) {
  if (!v.is_object()) return false;
  for (const auto& [key, value] : v.items()) {
    if (key != "user_id" || !(value.is_string() || value.is_null())) return false;
  }
  return true;
}

constexpr NoOpField kCacheControl = {
    "cache_control", IsCacheControl,
    "expected {\"type\": \"ephemeral\"} (tandem reuses every cached prompt prefix)"};

// What a block may carry beyond what tandem reads: a cache breakpoint, and on text the
// citations of an echoed reply (not shown to the model).
constexpr NoOpField kBlockNoOps[] = {kCacheControl};
constexpr NoOpField kTextBlockNoOps[] = {
    kCacheControl,
    {"citations", [](const Json& v) { return v.is_array(); },
     "expected an array (citations of a reply; not shown to the model)"}};

// Anthropic's names for content blocks.
constexpr ContentNames kContentNames = {"blocks", "block type", "tandem serves text and images",
                                        "text", kTextBlockNoOps};

// The top level's no-ops: metadata.user_id and a service tier are for Anthropic's own
// accounting.
constexpr NoOpField kBodyNoOps[] = {
    {"metadata", IsAnthropicMetadata,
     "expected {\"user_id\": string} (an end-user id for the caller's own logs)"},
    {"service_tier", [](const Json& v) { return v == "auto" || v == "standard_only"; },
     "tandem has one service tier; send \"auto\" or \"standard_only\" or leave it out"},
};

constexpr std::string_view kBodyFields[] = {
    "model",    "max_tokens", "system",         "messages", "tools",        "tool_choice",
    "thinking", "stream",     "stop_sequences", "logprobs", "top_logprobs", "speculative"};

// The members a block of `type` may carry besides kBlockNoOps (text blocks: ContentText's).
void CheckBlockFields(const Json& block, const std::string& type, const std::string& where) {
  constexpr std::string_view kImage[] = {"type", "source"};
  constexpr std::string_view kThinking[] = {"type", "thinking"};
  constexpr std::string_view kRedacted[] = {"type", "data"};
  constexpr std::string_view kToolUse[] = {"type", "id", "name", "input"};
  constexpr std::string_view kToolResult[] = {"type", "tool_use_id", "content", "is_error"};
  // A thinking block's signature checks Anthropic's own replies; tandem signs none ("").
  constexpr NoOpField kSignature[] = {{"signature", IsString, "expected a string"}};
  if (type == "image") CheckFields(block, {kImage}, {kBlockNoOps}, where);
  if (type == "thinking") CheckFields(block, {kThinking}, {kSignature}, where);
  if (type == "redacted_thinking") CheckFields(block, {kRedacted}, {}, where);
  if (type == "tool_use") CheckFields(block, {kToolUse}, {kBlockNoOps}, where);
  if (type == "tool_result") CheckFields(block, {kToolResult}, {kBlockNoOps}, where);
}

// One API message; a user turn can yield tool messages followed by a user message.
void ParseMessage(const Json& m, const std::string& where, std::vector<ChatMessage>& out,
                  std::vector<RequestImage>& images) {
  ExpectType(m, "object", where);
  RejectUnknownFields(m, {"role", "content"}, where);
  const std::string role = RequiredString(m, "role", where);
  if (role != "user" && role != "assistant") {
    Fail(ErrorKind::kInvalidArgument,
         where + ".role: expected \"user\" or \"assistant\", got \"" + role + "\"");
  }
  const bool user = role == "user";
  ChatMessage msg;
  msg.role = user ? ChatRole::kUser : ChatRole::kAssistant;
  const Json& content = RequiredField(m, "content", where);
  const std::string cw = where + ".content";
  if (content.is_string()) {
    msg.content = content.get<std::string>();
    out.push_back(std::move(msg));
    return;
  }
  ExpectType(content, "array", cw);
  std::vector<ChatMessage> results;
  std::vector<ContentPart> parts;  // kept when the message has an image
  bool has_image = false;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& block = content[i];
    const std::string bw = ElementPath(cw, i);
    ExpectType(block, "object", bw);
    const std::string type = RequiredString(block, "type", bw);
    CheckBlockFields(block, type, bw);
    if (type == "text") {
      constexpr std::string_view kText[] = {"type", "text"};
      CheckFields(block, {kText}, {kTextBlockNoOps}, bw);
      const std::string text = RequiredString(block, "text", bw);
      msg.content += text;
      parts.push_back({.type = ContentType::kText, .text = text, .media = -1});
    } else if (type == "image" && user) {
      has_image = true;
      parts.push_back(
          {.type = ContentType::kImage, .text = {}, .media = static_cast<int>(images.size())});
      images.push_back(AnthropicImageBlock(block, bw));
    } else if (type == "thinking" && !user) {
      msg.reasoning += RequiredString(block, "thinking", bw);
    } else if (type == "redacted_thinking" && !user) {
      continue;
    } else if (type == "tool_use" && !user) {
      ToolCall call;
      call.id = RequiredString(block, "id", bw);
      call.name = RequiredString(block, "name", bw);
      const Json* input = FindField(block, "input");
      if (input != nullptr) ExpectType(*input, "object", bw + ".input");
      call.arguments = input != nullptr ? JsonText(*input) : "{}";
      msg.tool_calls.push_back(std::move(call));
    } else if (type == "tool_result" && user) {
      ChatMessage result;
      result.role = ChatRole::kTool;
      result.tool_call_id = RequiredString(block, "tool_use_id", bw);
      if (const Json* c = FindField(block, "content"))
        result.content = ContentText(*c, bw + ".content", kContentNames);
      if (OptionalBool(block, "is_error", bw).value_or(false)) {
        result.content = "Error: " + result.content;
      }
      results.push_back(std::move(result));
    } else if (type == "audio" || type == "input_audio") {
      Unsupported(bw, "block type '" + type +
                          "': the Messages API has no audio blocks (send audio to "
                          "/v1/chat/completions as an input_audio part, or to "
                          "/v1/audio/transcriptions)");
    } else {
      Unsupported(bw, "block type '" + type + "' in a " + role + " message");
    }
  }
  if (has_image) msg.parts = std::move(parts);
  for (ChatMessage& r : results) out.push_back(std::move(r));
  if (!user || !msg.content.empty() || has_image || results.empty()) {
    out.push_back(std::move(msg));
  }
}

ToolSpec ParseTool(const Json& tool, const std::string& where) {
  ExpectType(tool, "object", where);
  constexpr std::string_view kFields[] = {"type", "name", "description", "input_schema"};
  CheckFields(tool, {kFields}, {kBlockNoOps}, where);
  if (auto type = OptionalString(tool, "type", where); type && *type != "custom") {
    Unsupported(where + ".type", "tool type '" + *type + "'");
  }
  ToolSpec spec;
  spec.name = RequiredString(tool, "name", where);
  if (spec.name.empty()) Fail(ErrorKind::kInvalidArgument, where + ".name must not be empty");
  spec.description = OptionalString(tool, "description", where).value_or("");
  if (const Json* schema = FindField(tool, "input_schema")) {
    ExpectType(*schema, "object", where + ".input_schema");
    spec.parameters = *schema;
  }
  return spec;
}

void ApplyToolChoice(const Json& body, GenerationRequest& request) {
  const Json* choice = FindField(body, "tool_choice");
  if (choice == nullptr) return;
  ExpectType(*choice, "object", "tool_choice");
  RejectUnknownFields(*choice, {"type", "name", "disable_parallel_tool_use"}, "tool_choice");
  const std::string type = RequiredString(*choice, "type", "tool_choice");
  if (OptionalBool(*choice, "disable_parallel_tool_use", "tool_choice").value_or(false)) {
    request.max_tool_calls = 1;
  }
  request.tool_call_required = type == "any" || type == "tool";
  if (type == "auto" || type == "any") return;
  if (type == "none") {
    request.tools.clear();
    return;
  }
  if (type != "tool") {
    Fail(ErrorKind::kInvalidArgument,
         "tool_choice.type: expected auto, any, tool or none, got \"" + type + "\"");
  }
  KeepNamedTool(RequiredString(*choice, "name", "tool_choice"), "tool", request);
}

void ParseBody(const Json& body, GenerationRequest& request, bool need_max_tokens) {
  CheckFields(body, {kBodyFields, kSamplingFields, kLlamaServerFields},
              {kBodyNoOps, LlamaServerNoOps()}, "");
  request.chat = true;
  request.model = OptionalString(body, "model").value_or("");
  if (auto n = OptionalInteger(body, "max_tokens", 1, std::numeric_limits<int32_t>::max())) {
    request.max_tokens = static_cast<int>(*n);
  } else if (need_max_tokens) {
    Fail(ErrorKind::kInvalidArgument, "max_tokens is required");
  }
  if (const Json* system = FindField(body, "system")) {
    ChatMessage msg;
    msg.role = ChatRole::kSystem;
    msg.content = ContentText(*system, "system", kContentNames);
    request.messages.push_back(std::move(msg));
  }
  const Json& messages = MessagesField(body);
  for (size_t i = 0; i < messages.size(); ++i) {
    ParseMessage(messages[i], ElementPath("messages", i), request.messages, request.images);
  }
  ParseToolsField(body, request, ParseTool);
  ApplyToolChoice(body, request);
  if (const Json* thinking = FindField(body, "thinking")) {
    ExpectType(*thinking, "object", "thinking");
    RejectUnknownFields(*thinking, {"type", "budget_tokens"}, "thinking");
    const std::string type = RequiredString(*thinking, "type", "thinking");
    if (type != "enabled" && type != "disabled" && type != "adaptive") {
      Fail(ErrorKind::kInvalidArgument,
           "thinking.type: expected enabled, disabled or adaptive, got \"" + type + "\"");
    }
    // Enforced by closing the thought channel (Anthropic's minimum of 1024 is not required).
    if (auto budget = OptionalInteger(*thinking, "budget_tokens", 0,
                                      std::numeric_limits<int32_t>::max(), "thinking")) {
      if (type == "enabled") request.thinking_budget = static_cast<int>(*budget);
    }
    request.thinking = type != "disabled";
  }
  request.stream = OptionalBool(body, "stream").value_or(false);
  ParseStopField(body, "stop_sequences", request);
  ParseSamplingFields(body, request);
  ParseLlamaServerFields(body, request);
  for (const char* name : {"logprobs", "top_logprobs", "n_probs"}) {
    const Json* v = FindField(body, name);
    if (v != nullptr && !v->is_null() && *v != false && *v != 0) {
      Fail(ErrorKind::kInvalidArgument,
           std::string(name) + ": not supported on /v1/messages (use /v1/chat/completions)");
    }
  }
  ParseSpeculativeField(body, request);
}

}  // namespace

void ParseMessagesBody(const Json& body, GenerationRequest& request) {
  ParseBody(body, request, /*need_max_tokens=*/true);
}

void ParseCountTokensBody(const Json& body, GenerationRequest& request) {
  ParseBody(body, request, /*need_max_tokens=*/false);
}

const char* AnthropicStopReason(const GenerationTotals& totals, bool made_tool_calls) {
  if (totals.finish == FinishReason::kLength) return "max_tokens";
  if (totals.finish == FinishReason::kStopString) return "stop_sequence";
  if (made_tool_calls) return "tool_use";
  return "end_turn";
}

Json AnthropicUsage(const GenerationTotals& totals) {
  return {
      {"input_tokens", totals.prompt_tokens - totals.cached_prompt_tokens},
      {"output_tokens", totals.completion_tokens},
      {"cache_read_input_tokens", totals.cached_prompt_tokens},
      {"cache_creation_input_tokens", 0},
  };
}

Json ToolUseBlock(const ToolCall& call) {
  Json input = Json::parse(call.arguments.empty() ? "{}" : call.arguments, nullptr, false);
  if (!input.is_object()) input = Json::object();
  return {{"type", "tool_use"}, {"id", call.id}, {"name", call.name}, {"input", input}};
}

Json MessageJson(const std::string& id, const std::string& model, const ChatOutput& output,
                 const GenerationTotals& totals, const Json& timings) {
  Json content = Json::array();
  if (!output.reasoning.empty()) {
    content.push_back({{"type", "thinking"}, {"thinking", output.reasoning}, {"signature", ""}});
  }
  if (!output.content.empty() || output.tool_calls.empty()) {
    content.push_back({{"type", "text"}, {"text", output.content}});
  }
  for (const ToolCall& c : output.tool_calls) content.push_back(ToolUseBlock(c));
  const bool stopped = totals.finish == FinishReason::kStopString;
  Json message = {
      {"id", id},
      {"type", "message"},
      {"role", "assistant"},
      {"model", model},
      {"content", content},
      {"stop_reason", AnthropicStopReason(totals, !output.tool_calls.empty())},
      {"stop_sequence", stopped ? Json(totals.stop_string) : Json(nullptr)},
      {"usage", AnthropicUsage(totals)},
      {"timings", timings},
  };
  if (!output.warnings.empty()) message["warnings"] = output.warnings;
  return message;
}

Json MessageStartEvent(const std::string& id, const std::string& model, int input_tokens,
                       int cached_tokens) {
  return {{"type", "message_start"},
          {"message",
           {{"id", id},
            {"type", "message"},
            {"role", "assistant"},
            {"model", model},
            {"content", Json::array()},
            {"stop_reason", nullptr},
            {"stop_sequence", nullptr},
            {"usage",
             {{"input_tokens", input_tokens},
              {"output_tokens", 0},
              {"cache_read_input_tokens", cached_tokens},
              {"cache_creation_input_tokens", 0}}}}}};
}

Json ContentBlockStartEvent(int index, const Json& block) {
  return {{"type", "content_block_start"}, {"index", index}, {"content_block", block}};
}

Json ContentBlockDeltaEvent(int index, const Json& delta) {
  return {{"type", "content_block_delta"}, {"index", index}, {"delta", delta}};
}

Json ContentBlockStopEvent(int index) {
  return {{"type", "content_block_stop"}, {"index", index}};
}

Json MessageDeltaEvent(const GenerationTotals& totals, bool made_tool_calls, const Json& timings) {
  const bool stopped = totals.finish == FinishReason::kStopString;
  return {{"type", "message_delta"},
          {"delta",
           {{"stop_reason", AnthropicStopReason(totals, made_tool_calls)},
            {"stop_sequence", stopped ? Json(totals.stop_string) : Json(nullptr)}}},
          {"usage", AnthropicUsage(totals)},
          {"timings", timings}};
}

Json MessageStopEvent() {
  return {{"type", "message_stop"}};
}

Json PingEvent() {
  return {{"type", "ping"}};
}

}  // namespace tandem::server
