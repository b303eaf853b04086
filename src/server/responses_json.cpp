// OpenAI Responses request parsing and response building.
#include "server/responses_json.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "base/error.h"
#include "server/constraint_fields.h"
#include "server/ids.h"
#include "server/media_fields.h"
#include "server/openai_json.h"
#include "server/request_fields.h"

namespace tandem::server {
namespace {

constexpr int64_t kMaxTokensLimit = std::numeric_limits<int32_t>::max();
constexpr size_t kMaxMetadataKeys = 16;

[[noreturn]] void Invalid(const std::string& message) {
  Fail(ErrorKind::kInvalidArgument, message);
}

// {"type": "input_image", "image_url": "data:...", "detail": "auto"}: OpenAiImagePart reads the
// data URL; stored files are refused (tandem keeps none).
RequestImage InputImagePart(const Json& part, const std::string& where) {
  RejectUnknownFields(part, {"type", "image_url", "detail", "file_id"}, where);
  if (FindField(part, "file_id") != nullptr) {
    Invalid(FieldPath(where, "file_id") +
            ": tandem stores no files; send the image inline as a data URL in image_url");
  }
  if (auto detail = OptionalString(part, "detail", where); detail && *detail != "auto") {
    Invalid(FieldPath(where, "detail") + ": '" + *detail +
            "' is not supported (tandem sizes images by --image-budget; use \"auto\")");
  }
  return OpenAiImagePart(part, where);
}

constexpr ContentNames kInputNames = {"content parts", "content type",
                                      "tandem serves input_text and input_image parts",
                                      "input_text"};
constexpr MediaPartReaders kMediaParts = {"input_image", InputImagePart, "", nullptr};

// An assistant turn's text: a string, or output_text (a response's own) or input_text parts.
std::string AssistantText(const Json& content, const std::string& where) {
  if (content.is_string()) return content.get<std::string>();
  ExpectType(content, "array", where);
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_where = ElementPath(where, i);
    ExpectType(content[i], "object", part_where);
    const std::string type = RequiredString(content[i], "type", part_where);
    if (type != "output_text" && type != "input_text") {
      Invalid(part_where + ": content type '" + type +
              "' is not supported in an assistant message (output_text or input_text)");
    }
    // A response's own output_text carries annotations and logprobs; sent back, they change
    // nothing.
    constexpr std::string_view kFields[] = {"type", "text"};
    constexpr NoOpField kEchoed[] = {
        {"annotations", [](const Json& v) { return v.is_array(); }, "expected an array"},
        {"logprobs", [](const Json& v) { return v.is_array(); }, "expected an array"}};
    CheckFields(content[i], {kFields}, {kEchoed}, part_where);
    text += RequiredString(content[i], "text", part_where);
  }
  return text;
}

// The reasoning text of a reasoning item: its reasoning_text content, else its summary text.
std::string ReasoningText(const Json& item, const std::string& where) {
  RejectUnknownFields(item, {"type", "id", "summary", "content", "encrypted_content", "status"},
                      where);
  if (FindField(item, "encrypted_content") != nullptr) {
    Invalid(FieldPath(where, "encrypted_content") + ": tandem does not encrypt reasoning");
  }
  for (const char* member : {"content", "summary"}) {
    const Json* parts = FindField(item, member);
    if (parts == nullptr) continue;
    const std::string parts_where = FieldPath(where, member);
    ExpectType(*parts, "array", parts_where);
    std::string text;
    for (size_t i = 0; i < parts->size(); ++i) {
      const std::string part_where = ElementPath(parts_where, i);
      ExpectType((*parts)[i], "object", part_where);
      text += RequiredString((*parts)[i], "text", part_where);
    }
    if (!text.empty()) return text;
  }
  return "";
}

// Input items in order become chat messages: the assistant side of one turn (reasoning, a
// message, function calls) is one assistant message; each function_call_output a tool message.
class Conversation {
 public:
  explicit Conversation(GenerationRequest& request) : request_(request) {}

  void Add(const Json& item, const std::string& where) {
    ExpectType(item, "object", where);
    const std::string type = OptionalString(item, "type", where).value_or("message");
    if (type == "message") {
      AddMessage(item, where);
    } else if (type == "function_call") {
      RejectUnknownFields(item, {"type", "id", "call_id", "name", "arguments", "status"}, where);
      ToolCall call;
      call.id = RequiredString(item, "call_id", where);
      call.name = RequiredString(item, "name", where);
      call.arguments = ToolArgumentsText(item, where);
      Assistant().tool_calls.push_back(std::move(call));
    } else if (type == "function_call_output") {
      RejectUnknownFields(item, {"type", "id", "call_id", "output", "status"}, where);
      open_ = false;
      ChatMessage msg;
      msg.role = ChatRole::kTool;
      msg.tool_call_id = RequiredString(item, "call_id", where);
      msg.content = ContentText(RequiredField(item, "output", where), FieldPath(where, "output"),
                                kInputNames);
      request_.messages.push_back(std::move(msg));
    } else if (type == "reasoning") {
      std::string text = ReasoningText(item, where);
      if (open_) {
        const ChatMessage& last = request_.messages.back();
        if (!last.content.empty() || !last.tool_calls.empty() || !last.reasoning.empty()) {
          open_ = false;
        }
      }
      Assistant().reasoning = std::move(text);
    } else {
      Invalid(FieldPath(where, "type") + ": item type '" + type +
              "' is not supported (message, function_call, function_call_output, reasoning)");
    }
  }

  // A user message built by the caller (a string input).
  void AddUser(ChatMessage msg) {
    open_ = false;
    request_.messages.push_back(std::move(msg));
  }

 private:
  void AddMessage(const Json& item, const std::string& where) {
    RejectUnknownFields(item, {"type", "role", "content", "id", "status"}, where);
    const std::string role = RequiredString(item, "role", where);
    const Json& content = RequiredField(item, "content", where);
    const std::string content_where = FieldPath(where, "content");
    if (role == "assistant") {
      std::string text = AssistantText(content, content_where);
      if (open_) {
        const ChatMessage& last = request_.messages.back();
        if (!last.content.empty() || !last.tool_calls.empty()) open_ = false;
      }
      Assistant().content += text;
      return;
    }
    ChatMessage msg;
    if (role == "user") {
      msg.role = ChatRole::kUser;
    } else if (role == "system" || role == "developer") {
      msg.role = ChatRole::kSystem;
    } else {
      Invalid(FieldPath(where, "role") + ": expected user, system, developer or assistant, got '" +
              role + "'");
    }
    if (msg.role == ChatRole::kUser && HasMediaPart(content, kMediaParts)) {
      msg.parts = ContentParts(content, content_where, kInputNames, kMediaParts, request_);
    } else {
      msg.content = ContentText(content, content_where, kInputNames);
    }
    open_ = false;
    request_.messages.push_back(std::move(msg));
  }

  ChatMessage& Assistant() {
    if (!open_) {
      ChatMessage msg;
      msg.role = ChatRole::kAssistant;
      request_.messages.push_back(std::move(msg));
      open_ = true;
    }
    return request_.messages.back();
  }

  GenerationRequest& request_;
  bool open_ = false;  // the last message is an assistant turn that takes more items
};

// {"type": "function", "name", "description", "parameters", "strict"} (flat, not nested under
// "function" as in chat completions). Strict or not, arguments follow the schema only when a
// call is forced (tool_choice).
ToolSpec ParseFlatTool(const Json& tool, const std::string& where) {
  ExpectType(tool, "object", where);
  const std::string type = RequiredString(tool, "type", where);
  if (type != "function") {
    Invalid(FieldPath(where, "type") + ": only \"function\" tools are supported, got '" + type +
            "'");
  }
  RejectUnknownFields(tool, {"type", "name", "description", "parameters", "strict"}, where);
  ToolSpec spec;
  spec.name = RequiredString(tool, "name", where);
  if (spec.name.empty()) Invalid(FieldPath(where, "name") + " must not be empty");
  spec.description = OptionalString(tool, "description", where).value_or("");
  (void)OptionalBool(tool, "strict", where);
  if (const Json* params = FindField(tool, "parameters")) {
    ExpectType(*params, "object", FieldPath(where, "parameters"));
    spec.parameters = *params;
  }
  return spec;
}

// "none" drops the tools, "auto" keeps them, "required" forces a call, {"type": "function",
// "name"} forces a call of that one.
void ApplyToolChoice(const Json& body, GenerationRequest& request) {
  const Json* choice = FindField(body, "tool_choice");
  if (choice == nullptr) return;
  if (choice->is_string()) return ApplyToolChoiceMode(choice->get<std::string>(), request);
  ExpectType(*choice, "object", "tool_choice");
  const std::string type = RequiredString(*choice, "type", "tool_choice");
  if (type != "function") {
    Invalid("tool_choice.type: only \"function\" is supported, got '" + type + "'");
  }
  RejectUnknownFields(*choice, {"type", "name"}, "tool_choice");
  request.tool_call_required = true;
  KeepNamedTool(RequiredString(*choice, "name", "tool_choice"), "function", request);
}

void ParseReasoning(const Json& body, GenerationRequest& request) {
  const Json* reasoning = FindField(body, "reasoning");
  if (reasoning == nullptr) return;
  ExpectType(*reasoning, "object", "reasoning");
  RejectUnknownFields(*reasoning, {"effort", "summary", "generate_summary"}, "reasoning");
  for (const char* summary : {"summary", "generate_summary"}) {
    if (FindField(*reasoning, summary) != nullptr) {
      Invalid(std::string("reasoning.") + summary +
              ": tandem writes no reasoning summaries (the reasoning text is returned as the "
              "reasoning item's content); leave it out");
    }
  }
  if (auto effort = OptionalString(*reasoning, "effort", "reasoning")) {
    ApplyReasoningEffort(*effort, "reasoning.effort", request);
  }
}

void ParseMetadata(const Json& body) {
  const Json* metadata = FindField(body, "metadata");
  if (metadata == nullptr) return;
  ExpectType(*metadata, "object", "metadata");
  if (metadata->size() > kMaxMetadataKeys) {
    Invalid("metadata: at most " + std::to_string(kMaxMetadataKeys) + " keys");
  }
  for (const auto& [key, value] : metadata->items()) {
    ExpectType(value, "string", FieldPath("metadata", key));
  }
}

void ParseInput(const Json& body, const Json& history, GenerationRequest& request) {
  if (auto instructions = OptionalString(body, "instructions")) {
    ChatMessage system;
    system.role = ChatRole::kSystem;
    system.content = *instructions;
    request.messages.push_back(std::move(system));
  }
  const Json& input = RequiredField(body, "input");
  if (!input.is_string()) {
    ExpectType(input, "array", "input");
    if (input.empty()) Invalid("input must not be empty");
    CheckArraySize(input, kMaxMessages, "input");
  }
  Conversation conversation(request);
  for (size_t i = 0; i < history.size(); ++i) {
    conversation.Add(history[i], ElementPath("previous_response_id's conversation", i));
  }
  if (input.is_string()) {
    ChatMessage user;
    user.role = ChatRole::kUser;
    user.content = input.get<std::string>();
    conversation.AddUser(std::move(user));
    return;
  }
  for (size_t i = 0; i < input.size(); ++i) conversation.Add(input[i], ElementPath("input", i));
}

}  // namespace

void ParseResponsesBody(const Json& body, GenerationRequest& request, const Json& history) {
  constexpr std::string_view kFields[] = {"model",
                                          "input",
                                          "instructions",
                                          "tools",
                                          "tool_choice",
                                          "parallel_tool_calls",
                                          "text",
                                          "max_output_tokens",
                                          "temperature",
                                          "top_p",
                                          "stream",
                                          "reasoning",
                                          "store",
                                          "metadata",
                                          "user",
                                          "truncation",
                                          "speculative",
                                          "top_k",
                                          "min_p",
                                          "seed",
                                          "previous_response_id"};
  CheckFields(body, {kFields}, {OpenAiServiceNoOps()}, "");
  (void)OptionalBool(body, "store");
  (void)OptionalString(body, "previous_response_id");
  request.chat = true;
  request.model = OptionalString(body, "model").value_or("");
  ParseInput(body, history, request);
  ParseToolsField(body, request, ParseFlatTool);
  ApplyToolChoice(body, request);
  if (!OptionalBool(body, "parallel_tool_calls").value_or(true)) request.max_tool_calls = 1;
  if (const Json* text = FindField(body, "text")) {
    ExpectType(*text, "object", "text");
    RejectUnknownFields(*text, {"format"}, "text");
    ParseTextFormat(*text, request);
  }
  if (auto n = OptionalInteger(body, "max_output_tokens", 1, kMaxTokensLimit)) {
    request.max_tokens = static_cast<int>(*n);
  }
  ParseSamplingFields(body, request);
  request.stream = OptionalBool(body, "stream").value_or(false);
  ParseReasoning(body, request);
  ParseMetadata(body);
  (void)OptionalString(body, "user");  // an end-user id for the caller's logs: changes nothing
  if (auto truncation = OptionalString(body, "truncation");
      truncation && *truncation != "disabled") {
    Invalid("truncation: only \"disabled\" is supported (tandem never drops input)");
  }
  ParseSpeculativeField(body, request);
}

bool ResponsesStoreRequested(const Json& body, bool store_on) {
  const std::optional<bool> store = OptionalBool(body, "store");
  if (store_on) return store.value_or(true);
  constexpr const char* kOff =
      "this server keeps no responses (it was started with --responses-store-count 0 or "
      "--responses-store-bytes 0; both above 0 turn the response store on)";
  if (FindField(body, "previous_response_id") != nullptr) {
    Invalid(std::string("previous_response_id: ") + kOff +
            "; send the whole conversation in input instead");
  }
  if (store.value_or(false)) Invalid(std::string("store: ") + kOff + "; send store: false");
  return false;
}

Json InputItems(const Json& body) {
  const Json& input = RequiredField(body, "input");
  if (!input.is_string()) return input;
  return Json::array({{{"type", "message"},
                       {"role", "user"},
                       {"content", Json::array({{{"type", "input_text"}, {"text", input}}})}}});
}

Json ResponsesEcho(const Json& body, const GenerationRequest& request, bool stored) {
  auto given = [&](const char* name, Json fallback) {
    const Json* v = FindField(body, name);
    return v != nullptr ? *v : fallback;
  };
  Json reasoning = {{"effort", nullptr}, {"summary", nullptr}};
  if (const Json* r = FindField(body, "reasoning"); r != nullptr && FindField(*r, "effort")) {
    reasoning["effort"] = (*r)["effort"];
  }
  Json echo = {
      {"instructions", given("instructions", nullptr)},
      {"max_output_tokens", request.max_tokens > 0 ? Json(request.max_tokens) : Json(nullptr)},
      {"metadata", given("metadata", Json::object())},
      {"parallel_tool_calls", given("parallel_tool_calls", true)},
      {"previous_response_id", given("previous_response_id", nullptr)},
      {"reasoning", reasoning},
      {"store", stored},
      {"temperature", request.sampling.temperature},
      {"text", given("text", {{"format", {{"type", "text"}}}})},
      {"tool_choice", given("tool_choice", "auto")},
      {"tools", given("tools", Json::array())},
      {"top_p", request.sampling.top_p},
      {"truncation", "disabled"},
  };
  if (const Json* user = FindField(body, "user")) echo["user"] = *user;
  return echo;
}

Json OutputTextPart(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
}

Json ReasoningTextPart(const std::string& text) {
  return {{"type", "reasoning_text"}, {"text", text}};
}

Json ReasoningItem(const std::string& id, const std::string& text, const char* status) {
  return {{"id", id},
          {"type", "reasoning"},
          {"summary", Json::array()},
          {"content", Json::array({ReasoningTextPart(text)})},
          {"status", status}};
}

Json MessageItem(const std::string& id, const std::string& text, const char* status) {
  return {{"id", id},
          {"type", "message"},
          {"role", "assistant"},
          {"status", status},
          {"content", Json::array({OutputTextPart(text)})}};
}

Json FunctionCallItem(const std::string& id, const ToolCall& call, const char* status) {
  return {{"id", id},          {"type", "function_call"},
          {"status", status},  {"call_id", call.id},
          {"name", call.name}, {"arguments", call.arguments.empty() ? "{}" : call.arguments}};
}

Json OutputItems(const ChatOutput& output, bool cut_off) {
  Json items = Json::array();
  if (!output.reasoning.empty()) {
    items.push_back(ReasoningItem(RandomId("rs_"), output.reasoning, "completed"));
  }
  if (!output.content.empty() || output.tool_calls.empty()) {
    items.push_back(MessageItem(RandomId("msg_"), output.content, "completed"));
  }
  for (const ToolCall& call : output.tool_calls) {
    items.push_back(FunctionCallItem(RandomId("fc_"), call, "completed"));
  }
  if (cut_off && output.tool_calls.empty()) items.back()["status"] = "incomplete";
  return items;
}

Json ResponsesUsage(const GenerationTotals& totals) {
  return {{"input_tokens", totals.prompt_tokens},
          {"input_tokens_details", {{"cached_tokens", totals.cached_prompt_tokens}}},
          {"output_tokens", totals.completion_tokens},
          {"output_tokens_details", {{"reasoning_tokens", 0}}},
          {"total_tokens", totals.prompt_tokens + totals.completion_tokens}};
}

Json ResponseObject(const ResponsesMeta& meta, const Json& echo, const Json& output,
                    const GenerationTotals* totals) {
  const bool incomplete = totals != nullptr && totals->finish == FinishReason::kLength;
  Json j = {{"id", meta.id},
            {"object", "response"},
            {"created_at", meta.created_at},
            {"status", totals == nullptr ? "in_progress"
                       : incomplete      ? "incomplete"
                                         : "completed"},
            {"background", false},
            {"error", nullptr},
            {"incomplete_details", incomplete ? Json{{"reason", "max_output_tokens"}} : Json()},
            {"model", meta.model}};
  for (const auto& [key, value] : echo.items()) j[key] = value;
  j["output"] = output;
  j["usage"] = totals == nullptr ? Json() : ResponsesUsage(*totals);
  return j;
}

}  // namespace tandem::server
