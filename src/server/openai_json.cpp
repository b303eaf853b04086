// OpenAI request parsing and response building.
#include "server/openai_json.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

#include "base/error.h"
#include "sampling/logprobs.h"
#include "server/constraint_fields.h"
#include "server/json_limits.h"
#include "server/media_fields.h"
#include "server/request_fields.h"

namespace tandem::server {
namespace {

constexpr int64_t kMaxTokensLimit = std::numeric_limits<int32_t>::max();

bool IsStringMap(const Json& v) {
  return v.is_object() &&
         std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_string(); });
}

bool NeverSent(const Json&) {
  return false;  // only null passes
}

// Fields both endpoints accept and do not act on, each with the values that change nothing.
constexpr NoOpField kCommonNoOps[] = {
    {"user", IsString, "expected a string (an end-user id for the caller's own logs)"},
};

// The chat endpoint's: what OpenAI's SDKs and clients send that changes nothing on a server
// which stores no chat completions and has one service tier.
constexpr NoOpField kChatNoOps[] = {
    {"store", [](const Json& v) { return v == false; },
     "tandem stores no completions; send store: false or leave it out"},
    {"metadata", IsStringMap,
     "expected an object of strings (tags of a stored completion; tandem stores none)"},
    {"modalities", [](const Json& v) { return v == Json::array({"text"}); },
     "tandem answers with text only; send [\"text\"] or leave it out"},
    {"verbosity", [](const Json& v) { return v == "medium"; },
     "tandem cannot steer the answer's length by a verbosity level; send \"medium\" or leave "
     "it out, and bound the answer with max_tokens"},
};

// The fields ParseCommonFields reads.
constexpr std::string_view kCommonFields[] = {
    "model", "stream", "stream_options", "max_tokens", "max_completion_tokens",
    "n",     "stop",   "speculative"};

constexpr std::string_view kChatFields[] = {
    "messages",           "tools",           "tool_choice",      "parallel_tool_calls",
    "structured_outputs", "response_format", "reasoning_effort", "chat_template_kwargs",
    "logprobs",           "top_logprobs"};

constexpr std::string_view kCompletionFields[] = {
    "prompt", "logprobs", "echo", "suffix", "best_of", "structured_outputs", "response_format"};

// Members of a message that the assistant turns OpenAI returns carry and clients send back
// (refusal, audio, function_call as null, annotations), and a speaker's name: Gemma's chat
// format has no speaker names, so it is accepted and not shown to the model.
constexpr NoOpField kNameNoOp[] = {{"name", IsString, "expected a string"}};
constexpr NoOpField kAssistantEchoNoOps[] = {
    {"refusal", [](const Json& v) { return v.is_string() && v.get<std::string>().empty(); },
     "tandem's chat format has no refusal turn; send the text as content"},
    {"audio", NeverSent, "tandem answers with text only; an audio reply cannot be sent back"},
    {"function_call", NeverSent, "the deprecated function_call is not supported; use tool_calls"},
    {"annotations", [](const Json& v) { return v.is_array(); },
     "expected an array (citations of a reply; not shown to the model)"},
};

// A tool call's index is its position in a streamed reply; clients that gather a stream keep it.
constexpr NoOpField kToolCallNoOps[] = {
    {"index", [](const Json& v) { return v.is_number_integer(); }, "expected an integer"}};

RequestImage ChatImagePart(const Json& part, const std::string& where) {
  RejectUnknownFields(part, {"type", "image_url"}, where);
  return OpenAiImagePart(part, where);
}

RequestAudio ChatAudioPart(const Json& part, const std::string& where) {
  RejectUnknownFields(part, {"type", "input_audio"}, where);
  return OpenAiInputAudioPart(part, where);
}

// OpenAI's names for message content parts.
constexpr ContentNames kContentNames = {"content parts", "content type",
                                        "tandem serves text, image_url and input_audio parts"};
constexpr MediaPartReaders kMediaParts = {"image_url", ChatImagePart, "input_audio", ChatAudioPart};

ToolCall ParseToolCall(const Json& call, const std::string& where) {
  ExpectType(call, "object", where);
  constexpr std::string_view kFields[] = {"id", "type", "function"};
  CheckFields(call, {kFields}, {kToolCallNoOps}, where);
  if (auto type = OptionalString(call, "type", where); type && *type != "function") {
    Fail(ErrorKind::kInvalidArgument, where + ".type: only \"function\" tool calls are supported");
  }
  const std::string fn_where = where + ".function";
  const Json& function = RequiredField(call, "function", where);
  ExpectType(function, "object", fn_where);
  RejectUnknownFields(function, {"name", "arguments"}, fn_where);
  ToolCall tc;
  tc.id = OptionalString(call, "id", where).value_or("");
  tc.name = RequiredString(function, "name", fn_where);
  tc.arguments = ToolArgumentsText(function, fn_where);
  return tc;
}

ChatRole ParseRole(const Json& message, const std::string& where) {
  const std::string role = RequiredString(message, "role", where);
  try {
    return ParseChatRole(role);
  } catch (const Error& e) {
    Fail(ErrorKind::kInvalidArgument, where + ".role: " + e.what());
  }
}

// The members a message of `role` may carry.
void CheckMessageFields(const Json& m, ChatRole role, const std::string& where) {
  switch (role) {
    case ChatRole::kSystem:
    case ChatRole::kUser: {
      constexpr std::string_view kFields[] = {"role", "content"};
      CheckFields(m, {kFields}, {kNameNoOp}, where);
      break;
    }
    case ChatRole::kAssistant: {
      constexpr std::string_view kFields[] = {"role", "content", "tool_calls", "reasoning_content"};
      CheckFields(m, {kFields}, {kNameNoOp, kAssistantEchoNoOps}, where);
      break;
    }
    case ChatRole::kTool:
      RejectUnknownFields(m, {"role", "content", "tool_call_id", "name"}, where);
      break;
  }
}

ChatMessage ParseMessage(const Json& m, const std::string& where, GenerationRequest& request) {
  ExpectType(m, "object", where);
  ChatMessage msg;
  msg.role = ParseRole(m, where);
  CheckMessageFields(m, msg.role, where);
  const Json* content = FindField(m, "content");
  if (content != nullptr && msg.role == ChatRole::kUser && HasMediaPart(*content, kMediaParts)) {
    msg.parts = ContentParts(*content, where + ".content", kContentNames, kMediaParts, request);
  } else if (content != nullptr) {
    msg.content = ContentText(*content, where + ".content", kContentNames);
  }
  switch (msg.role) {
    case ChatRole::kSystem:
    case ChatRole::kUser:
      if (content == nullptr) Fail(ErrorKind::kInvalidArgument, where + ".content is required");
      break;
    case ChatRole::kAssistant: {
      msg.reasoning = OptionalString(m, "reasoning_content", where).value_or("");
      if (const Json* calls = FindField(m, "tool_calls")) {
        ExpectType(*calls, "array", where + ".tool_calls");
        for (size_t j = 0; j < calls->size(); ++j) {
          msg.tool_calls.push_back(
              ParseToolCall((*calls)[j], ElementPath(where + ".tool_calls", j)));
        }
      }
      break;
    }
    case ChatRole::kTool:
      if (content == nullptr) Fail(ErrorKind::kInvalidArgument, where + ".content is required");
      msg.tool_call_id = OptionalString(m, "tool_call_id", where).value_or("");
      msg.name = OptionalString(m, "name", where).value_or("");
      break;
  }
  return msg;
}

ToolSpec ParseTool(const Json& tool, const std::string& where) {
  ExpectType(tool, "object", where);
  RejectUnknownFields(tool, {"type", "function"}, where);
  const std::string type = OptionalString(tool, "type", where).value_or("function");
  if (type != "function") {
    Fail(ErrorKind::kInvalidArgument, where + ".type: only \"function\" tools are supported");
  }
  const std::string fn_where = where + ".function";
  const Json& function = RequiredField(tool, "function", where);
  ExpectType(function, "object", fn_where);
  RejectUnknownFields(function, {"name", "description", "parameters", "strict"}, fn_where);
  // Strict or not, arguments follow the schema only when a call is forced (tool_choice).
  (void)OptionalBool(function, "strict", fn_where);
  ToolSpec spec;
  spec.name = RequiredString(function, "name", fn_where);
  if (spec.name.empty()) Fail(ErrorKind::kInvalidArgument, fn_where + ".name must not be empty");
  spec.description = OptionalString(function, "description", fn_where).value_or("");
  if (const Json* params = FindField(function, "parameters")) {
    ExpectType(*params, "object", fn_where + ".parameters");
    spec.parameters = *params;
  }
  return spec;
}

// tool_choice: "none" drops the tools, "auto"/"required" keep them, a named function keeps it.
void ApplyToolChoice(const Json& body, GenerationRequest& request) {
  const Json* choice = FindField(body, "tool_choice");
  if (choice == nullptr) return;
  std::string name;
  if (choice->is_string()) return ApplyToolChoiceMode(choice->get<std::string>(), request);
  ExpectType(*choice, "object", "tool_choice");
  RejectUnknownFields(*choice, {"type", "function"}, "tool_choice");
  if (auto type = OptionalString(*choice, "type", "tool_choice"); type && *type != "function") {
    Fail(ErrorKind::kInvalidArgument,
         "tool_choice.type: only \"function\" is supported, got \"" + *type + "\"");
  }
  const Json& function = RequiredField(*choice, "function", "tool_choice");
  ExpectType(function, "object", "tool_choice.function");
  RejectUnknownFields(function, {"name"}, "tool_choice.function");
  name = RequiredString(function, "name", "tool_choice.function");
  request.tool_call_required = true;
  KeepNamedTool(name, "function", request);
}

void ParseThinking(const Json& body, GenerationRequest& request) {
  if (auto effort = OptionalString(body, "reasoning_effort")) {
    ApplyReasoningEffort(*effort, "reasoning_effort", request);
  }
  if (const Json* kwargs = FindField(body, "chat_template_kwargs")) {
    ExpectType(*kwargs, "object", "chat_template_kwargs");
    RejectUnknownFields(*kwargs, {"enable_thinking"}, "chat_template_kwargs");
    if (auto on = OptionalBool(*kwargs, "enable_thinking", "chat_template_kwargs")) {
      request.thinking = *on;
    }
  }
}

// Fields both endpoints read: model, stream, max_tokens, n, stop, sampling, speculative.
void ParseCommonFields(const Json& body, GenerationRequest& request) {
  request.model = OptionalString(body, "model").value_or("");
  request.stream = OptionalBool(body, "stream").value_or(false);
  if (const Json* options = FindField(body, "stream_options")) {
    ExpectType(*options, "object", "stream_options");
    constexpr NoOpField kObfuscation[] = {
        {"include_obfuscation", [](const Json& v) { return v == false; },
         "tandem pads no stream chunks; send false or leave it out"}};
    constexpr std::string_view kFields[] = {"include_usage"};
    CheckFields(*options, {kFields}, {kObfuscation}, "stream_options");
    request.include_usage =
        OptionalBool(*options, "include_usage", "stream_options").value_or(false);
  }
  for (const char* name : {"max_tokens", "max_completion_tokens"}) {
    if (auto n = OptionalInteger(body, name, -1, kMaxTokensLimit)) {
      if (*n == 0) Fail(ErrorKind::kInvalidArgument, std::string(name) + " must be >= 1");
      request.max_tokens = static_cast<int>(*n);
    }
  }
  if (auto n = OptionalInteger(body, "n", 1, kMaxTokensLimit); n && *n != 1) {
    Fail(ErrorKind::kInvalidArgument, "n: only n = 1 is supported");
  }
  ParseStopField(body, "stop", request);
  ParseSamplingFields(body, request);
  ParseLlamaServerFields(body, request);
  ParseSpeculativeField(body, request);
}

}  // namespace

std::string ToolArgumentsText(const Json& function, const std::string& where) {
  const Json* args = FindField(function, "arguments");
  if (args == nullptr) return "{}";
  Json parsed;
  if (args->is_string()) {
    const std::string& text = args->get_ref<const std::string&>();
    if (text.empty()) return "{}";
    parsed = ParseBoundedJson(text, where + ".arguments");
  } else {
    parsed = *args;
  }
  if (!parsed.is_object()) {
    Fail(ErrorKind::kInvalidArgument, where + ".arguments: expected a JSON object");
  }
  return JsonText(parsed);
}

void ApplyReasoningEffort(const std::string& effort, const std::string& field,
                          GenerationRequest& request) {
  static const std::pair<const char*, int> kEfforts[] = {
      {"none", 0}, {"minimal", 0}, {"low", 1024}, {"medium", 4096}, {"high", 16384}};
  const auto* e = std::find_if(std::begin(kEfforts), std::end(kEfforts),
                               [&](const auto& k) { return effort == k.first; });
  if (e == std::end(kEfforts)) {
    Fail(ErrorKind::kInvalidArgument,
         field + ": expected none, minimal, low, medium or high, got \"" + effort + "\"");
  }
  request.thinking = e->second > 0;
  request.thinking_budget = e->second > 0 ? e->second : -1;
}

void ParseChatCompletionBody(const Json& body, GenerationRequest& request) {
  CheckFields(body, {kChatFields, kCommonFields, kSamplingFields, kLlamaServerFields},
              {kCommonNoOps, kChatNoOps, OpenAiServiceNoOps(), LlamaServerNoOps()}, "");
  request.chat = true;
  const Json& messages = MessagesField(body);
  for (size_t i = 0; i < messages.size(); ++i) {
    request.messages.push_back(ParseMessage(messages[i], ElementPath("messages", i), request));
  }
  ParseToolsField(body, request, ParseTool);
  ApplyToolChoice(body, request);
  if (!OptionalBool(body, "parallel_tool_calls").value_or(true)) request.max_tool_calls = 1;
  ParseStructuredOutputs(body, request);
  ParseResponseFormat(body, request);
  ParseThinking(body, request);
  const bool logprobs = OptionalBool(body, "logprobs").value_or(false);
  if (auto n = OptionalInteger(body, "top_logprobs", 0, kMaxTopLogprobs)) {
    if (!logprobs) Fail(ErrorKind::kInvalidArgument, "top_logprobs needs logprobs: true");
    request.top_logprobs = static_cast<int>(*n);
  } else if (logprobs) {
    request.top_logprobs = 0;
  }
  ParseCommonFields(body, request);
}

void ParseCompletionBody(const Json& body, GenerationRequest& request, FieldNames extra) {
  CheckFields(body, {kCompletionFields, kCommonFields, kSamplingFields, kLlamaServerFields, extra},
              {kCommonNoOps, LlamaServerNoOps()}, "");
  request.chat = false;
  const Json& prompt = RequiredField(body, "prompt");
  auto take_ids = [&](const Json& ids, const std::string& where) {
    for (size_t i = 0; i < ids.size(); ++i) {
      const int64_t id = TokenIdValue(ids[i], ElementPath(where, i));
      if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
        Fail(ErrorKind::kInvalidArgument, ElementPath(where, i) + ": token id out of range");
      }
      request.prompt_tokens.push_back(static_cast<int32_t>(id));
    }
  };
  if (prompt.is_string()) {
    request.prompt = prompt.get<std::string>();
  } else if (prompt.is_array() && !prompt.empty() && prompt[0].is_number()) {
    take_ids(prompt, "prompt");
  } else if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_string()) {
    request.prompt = prompt[0].get<std::string>();
  } else if (prompt.is_array() && prompt.size() == 1 && prompt[0].is_array() &&
             !prompt[0].empty()) {
    take_ids(prompt[0], "prompt[0]");
  } else if (prompt.is_array()) {
    Fail(ErrorKind::kInvalidArgument,
         "prompt: expected a string, a token-id array, or one of them in a one-element array "
         "(one prompt per request)");
  } else {
    Fail(ErrorKind::kInvalidArgument,
         "prompt: expected a string or an array, got " + std::string(JsonTypeName(prompt)));
  }
  // The legacy form: logprobs is the number of top tokens (0..20; OpenAI allows 5).
  if (auto n = OptionalInteger(body, "logprobs", 0, kMaxTopLogprobs)) {
    request.top_logprobs = static_cast<int>(*n);
  }
  if (OptionalBool(body, "echo").value_or(false)) {
    Fail(ErrorKind::kInvalidArgument, "echo: not supported");
  }
  if (auto suffix = OptionalString(body, "suffix"); suffix && !suffix->empty()) {
    Fail(ErrorKind::kInvalidArgument, "suffix: not supported");
  }
  if (auto best_of = OptionalInteger(body, "best_of", 1, kMaxTokensLimit);
      best_of && *best_of > 1) {
    Fail(ErrorKind::kInvalidArgument, "best_of: only 1 is supported");
  }
  ParseStructuredOutputs(body, request);
  ParseResponseFormat(body, request);
  ParseCommonFields(body, request);
}

const char* OpenAiFinishReason(const GenerationTotals& totals, bool made_tool_calls) {
  if (totals.finish == FinishReason::kLength) return "length";
  if (made_tool_calls) return "tool_calls";
  return "stop";
}

Json OpenAiUsage(const GenerationTotals& totals) {
  return {
      {"prompt_tokens", totals.prompt_tokens},
      {"completion_tokens", totals.completion_tokens},
      {"total_tokens", totals.prompt_tokens + totals.completion_tokens},
      {"prompt_tokens_details", {{"cached_tokens", totals.cached_prompt_tokens}}},
  };
}

Json OpenAiToolCall(const ToolCall& call, int index) {
  Json j = {{"id", call.id},
            {"type", "function"},
            {"function",
             {{"name", call.name}, {"arguments", call.arguments.empty() ? "{}" : call.arguments}}}};
  if (index >= 0) j["index"] = index;
  return j;
}

namespace {

// The fields every OpenAI completion object and chunk shares, around its one choice.
Json ResponseEnvelope(const ResponseMeta& meta, const char* object, Json choice) {
  choice["index"] = 0;
  choice["logprobs"] = nullptr;
  return {
      {"id", meta.id},
      {"object", object},
      {"created", meta.created},
      {"model", meta.model},
      {"system_fingerprint", "tandem"},
      {"choices", Json::array({std::move(choice)})},
  };
}

}  // namespace

Json ChatCompletionJson(const ResponseMeta& meta, const ChatOutput& output,
                        const GenerationTotals& totals, const Json& timings) {
  Json message = {{"role", "assistant"}, {"content", output.content}};
  if (!output.reasoning.empty()) message["reasoning_content"] = output.reasoning;
  if (!output.tool_calls.empty()) {
    Json calls = Json::array();
    for (const ToolCall& c : output.tool_calls) calls.push_back(OpenAiToolCall(c, -1));
    message["tool_calls"] = calls;
    if (output.content.empty()) message["content"] = nullptr;
  }
  Json j =
      ResponseEnvelope(meta, "chat.completion",
                       {{"message", message},
                        {"finish_reason", OpenAiFinishReason(totals, !output.tool_calls.empty())}});
  j["usage"] = OpenAiUsage(totals);
  j["timings"] = timings;
  if (!output.warnings.empty()) j["warnings"] = output.warnings;
  return j;
}

Json ChatChunkJson(const ResponseMeta& meta, const Json& delta, const Json& finish_reason) {
  return ResponseEnvelope(meta, "chat.completion.chunk",
                          {{"delta", delta}, {"finish_reason", finish_reason}});
}

Json TextCompletionJson(const ResponseMeta& meta, const std::string& text,
                        const GenerationTotals& totals, const Json& timings) {
  Json j = ResponseEnvelope(meta, "text_completion",
                            {{"text", text}, {"finish_reason", OpenAiFinishReason(totals, false)}});
  j["usage"] = OpenAiUsage(totals);
  j["timings"] = timings;
  return j;
}

Json TextChunkJson(const ResponseMeta& meta, const std::string& text, const Json& finish_reason) {
  return ResponseEnvelope(meta, "text_completion",
                          {{"text", text}, {"finish_reason", finish_reason}});
}

}  // namespace tandem::server
