// Shared sampling, stop and speculation fields of completion requests.
#include "server/request_fields.h"

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "sampling/logprobs.h"
#include "sampling/sampling_params.h"
#include "server/constraint_fields.h"
#include "speculative/draft_tree.h"
#include "speculative/spec_options.h"

namespace tandem::server {
namespace {

constexpr int kMaxStopStrings = 16;
constexpr std::string_view kTextPartFields[] = {"type", "text"};

LogitBias MakeBias(int64_t token, double bias) {
  LogitBias b;
  b.token = static_cast<int32_t>(token);
  b.bias = bias <= -100.0 ? -std::numeric_limits<float>::infinity() : static_cast<float>(bias);
  return b;
}

void ParseLogitBias(const Json& value, SamplingParams& sampling) {
  constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();
  if (value.is_object()) {
    for (const auto& [key, bias] : value.items()) {
      const std::string where = "logit_bias[\"" + key + "\"]";
      size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != key.size() || id < 0 || id > kMaxId) {
        Fail(ErrorKind::kInvalidArgument, where + ": the key must be a token id");
      }
      if (!bias.is_number()) {
        Fail(ErrorKind::kInvalidArgument,
             where + ": expected a number, got " + std::string(JsonTypeName(bias)));
      }
      sampling.logit_bias.push_back(MakeBias(id, bias.get<double>()));
    }
    return;
  }
  if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      const Json& pair = value[i];
      const std::string where = "logit_bias[" + std::to_string(i) + "]";
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() ||
          !pair[1].is_number()) {
        Fail(ErrorKind::kInvalidArgument, where + ": expected [token_id, bias]");
      }
      const int64_t id = pair[0].get<int64_t>();
      if (id < 0 || id > kMaxId) {
        Fail(ErrorKind::kInvalidArgument,
             where + ": token id " + std::to_string(id) + " is out of range");
      }
      sampling.logit_bias.push_back(MakeBias(id, pair[1].get<double>()));
    }
    return;
  }
  Fail(ErrorKind::kInvalidArgument,
       "logit_bias: expected an object or an array, got " + std::string(JsonTypeName(value)));
}

bool IsEmptyString(const Json& v) {
  return v.is_string() && v.get_ref<const std::string&>().empty();
}

bool IsNumber(const Json& v, double n) {
  return v.is_number() && v.get<double>() == n;
}

constexpr std::string_view kNotImplemented =
    "not supported by tandem (the request would not get what it asks for); remove the field";

// Each with the value that leaves sampling as it is; "" passes too (llama-server's web page
// sends grammar: ""), and only "" where no number does.
constexpr NoOpField kLlamaServerNoOps[] = {
    {"mirostat", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); }, kNotImplemented},
    {"mirostat_tau", IsEmptyString, kNotImplemented},
    {"mirostat_eta", IsEmptyString, kNotImplemented},
    {"typical_p", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 1); },
     kNotImplemented},
    {"tfs_z", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 1); }, kNotImplemented},
    {"top_n_sigma", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, -1); },
     kNotImplemented},
    {"dry_multiplier", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); },
     kNotImplemented},
    {"dry_base", IsEmptyString, kNotImplemented},
    {"dry_allowed_length", IsEmptyString, kNotImplemented},
    {"dry_penalty_last_n", IsEmptyString, kNotImplemented},
    {"dry_sequence_breakers", IsEmptyString, kNotImplemented},
    {"xtc_probability", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); },
     kNotImplemented},
    {"xtc_threshold", IsEmptyString, kNotImplemented},
    {"dynatemp_range", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); },
     kNotImplemented},
    {"dynatemp_exponent", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 1); },
     kNotImplemented},
    {"n_keep", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); }, kNotImplemented},
    {"id_slot", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, -1); }, kNotImplemented},
    {"penalize_nl", IsEmptyString, kNotImplemented},
    {"samplers", IsEmptyString, kNotImplemented},
    {"min_keep", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); }, kNotImplemented},
    {"n_indent", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); }, kNotImplemented},
    {"t_max_predict_ms", [](const Json& v) { return IsEmptyString(v) || IsNumber(v, 0); },
     kNotImplemented},
    {"lora", IsEmptyString, kNotImplemented},
    {"post_sampling_probs", IsEmptyString, kNotImplemented},
};

constexpr NoOpField kOpenAiServiceNoOps[] = {
    {"service_tier", [](const Json& v) { return v == "auto" || v == "default"; },
     "tandem has one service tier; send \"auto\" or \"default\" or leave it out"},
    {"prompt_cache_key", IsString,
     "expected a string (tandem reuses every cached prompt prefix without a key)"},
    {"safety_identifier", IsString, "expected a string (an end-user id for the caller's own logs)"},
};

}  // namespace

std::span<const NoOpField> LlamaServerNoOps() {
  return kLlamaServerNoOps;
}

std::span<const NoOpField> OpenAiServiceNoOps() {
  return kOpenAiServiceNoOps;
}

void CheckArraySize(const Json& array, size_t max, std::string_view name) {
  if (array.size() > max) {
    Fail(ErrorKind::kInvalidArgument, std::string(name) + ": " + std::to_string(array.size()) +
                                          " elements; the limit is " + std::to_string(max));
  }
}

const Json& MessagesField(const Json& body) {
  const Json& messages = RequiredField(body, "messages");
  ExpectType(messages, "array", "messages");
  if (messages.empty()) Fail(ErrorKind::kInvalidArgument, "messages must not be empty");
  CheckArraySize(messages, kMaxMessages, "messages");
  return messages;
}

void ParseToolsField(const Json& body, GenerationRequest& request,
                     ToolSpec (*parse_tool)(const Json& tool, const std::string& where)) {
  const Json* tools = FindField(body, "tools");
  if (tools == nullptr) return;
  ExpectType(*tools, "array", "tools");
  CheckArraySize(*tools, kMaxTools, "tools");
  for (size_t i = 0; i < tools->size(); ++i) {
    request.tools.push_back(parse_tool((*tools)[i], ElementPath("tools", i)));
  }
}

void ApplyToolChoiceMode(const std::string& mode, GenerationRequest& request) {
  if (mode == "none") request.tools.clear();
  request.tool_call_required = mode == "required";
  if (mode == "none" || mode == "auto" || mode == "required") return;
  Fail(
      ErrorKind::kInvalidArgument,
      "tool_choice: expected \"none\", \"auto\", \"required\" or a function, got \"" + mode + "\"");
}

void KeepNamedTool(const std::string& name, std::string_view noun, GenerationRequest& request) {
  std::vector<ToolSpec> kept;
  for (ToolSpec& t : request.tools) {
    if (t.name == name) kept.push_back(std::move(t));
  }
  if (kept.empty()) {
    Fail(ErrorKind::kInvalidArgument, "tool_choice names " + std::string(noun) + " '" + name +
                                          "', which is not among the request's tools");
  }
  request.tools = std::move(kept);
}

std::string ContentText(const Json& content, const std::string& where, const ContentNames& names) {
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) {
    Fail(ErrorKind::kInvalidArgument, where + ": expected a string or an array of " + names.parts +
                                          ", got " + JsonTypeName(content));
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_where = ElementPath(where, i);
    ExpectType(content[i], "object", part_where);
    const std::string type = RequiredString(content[i], "type", part_where);
    if (type != names.text_type) {
      Fail(ErrorKind::kInvalidArgument, part_where + ": " + names.part_type + " '" + type +
                                            "' is not supported (" + names.served + ")");
    }
    CheckFields(content[i], {kTextPartFields}, {names.text_part_no_ops}, part_where);
    text += RequiredString(content[i], "text", part_where);
  }
  return text;
}

bool HasMediaPart(const Json& content, const MediaPartReaders& readers) {
  if (!content.is_array()) return false;
  for (const Json& part : content) {
    const Json* type = part.is_object() ? FindField(part, "type") : nullptr;
    if (type == nullptr || !type->is_string()) continue;
    const std::string& t = type->get_ref<const std::string&>();
    if ((readers.read_image && t == readers.image_type) ||
        (readers.read_audio && t == readers.audio_type)) {
      return true;
    }
  }
  return false;
}

std::vector<ContentPart> ContentParts(const Json& content, const std::string& where,
                                      const ContentNames& names, const MediaPartReaders& readers,
                                      GenerationRequest& request) {
  ExpectType(content, "array", where);
  std::vector<ContentPart> parts;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_where = ElementPath(where, i);
    ExpectType(content[i], "object", part_where);
    const std::string type = RequiredString(content[i], "type", part_where);
    ContentPart part;
    if (readers.read_image && type == readers.image_type) {
      part.type = ContentType::kImage;
      part.media = static_cast<int>(request.images.size());
      request.images.push_back(readers.read_image(content[i], part_where));
    } else if (readers.read_audio && type == readers.audio_type) {
      part.type = ContentType::kAudio;
      part.media = static_cast<int>(request.audio.size());
      request.audio.push_back(readers.read_audio(content[i], part_where));
    } else if (type == names.text_type) {
      CheckFields(content[i], {kTextPartFields}, {names.text_part_no_ops}, part_where);
      part.text = RequiredString(content[i], "text", part_where);
    } else {
      Fail(ErrorKind::kInvalidArgument, part_where + ": " + names.part_type + " '" + type +
                                            "' is not supported (" + names.served + ")");
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

void ParseSamplingFields(const Json& body, GenerationRequest& request) {
  SamplingParams& s = request.sampling;
  if (auto v = OptionalNumber(body, "temperature", 0.0, 100.0)) s.temperature = float(*v);
  if (auto v = OptionalNumber(body, "top_p", 0.0, 1.0)) s.top_p = float(*v);
  if (auto v = OptionalInteger(body, "top_k", -1, std::numeric_limits<int32_t>::max())) {
    s.top_k = *v < 0 ? 0 : static_cast<int32_t>(*v);
  }
  if (auto v = OptionalNumber(body, "min_p", 0.0, 1.0)) s.min_p = float(*v);
  // Seeds are 64-bit: any integer up to 2^64 - 1 is used whole; negative ones ask for a random
  // seed (llama.cpp's -1).
  if (const Json* seed = FindField(body, "seed")) {
    if (seed->is_number_unsigned()) {
      s.seed = seed->get<uint64_t>();
    } else if (seed->is_number_integer()) {
      const int64_t v = seed->get<int64_t>();
      s.seed = v < 0 ? kRandomSeed : static_cast<uint64_t>(v);
    } else {
      Fail(ErrorKind::kInvalidArgument, "seed: expected an integer in [-2^63, 2^64 - 1], got " +
                                            std::string(JsonTypeName(*seed)));
    }
  }
  if (auto v = OptionalNumber(body, "presence_penalty", -2.0, 2.0)) s.presence_penalty = float(*v);
  if (auto v = OptionalNumber(body, "frequency_penalty", -2.0, 2.0)) {
    s.frequency_penalty = float(*v);
  }
  if (auto v = OptionalNumber(body, "repeat_penalty", 0.0, 100.0)) s.repeat_penalty = float(*v);
  if (auto v = OptionalInteger(body, "repeat_last_n", -1, 1 << 20)) {
    s.repeat_last_n = static_cast<int32_t>(*v);
  }
  if (const Json* bias = FindField(body, "logit_bias")) ParseLogitBias(*bias, s);
}

void ParseLlamaServerFields(const Json& body, GenerationRequest& request) {
  if (auto n = OptionalInteger(body, "n_predict", -1, std::numeric_limits<int32_t>::max())) {
    if (*n == 0) Fail(ErrorKind::kInvalidArgument, "n_predict must be -1 (no limit) or >= 1");
    if (*n > 0) request.max_tokens = static_cast<int>(*n);
  }
  request.ignore_eos = OptionalBool(body, "ignore_eos").value_or(false);
  if (auto n = OptionalInteger(body, "n_probs", 0, kMaxTopLogprobs); n && *n > 0) {
    request.n_probs = static_cast<int>(*n);
  }
  // llama-server's reasoning budget: 0 no thinking, -1 unlimited, N > 0 (tandem) thinking with
  // a budget of N tokens.
  if (auto n = OptionalInteger(body, "reasoning_budget", -1, std::numeric_limits<int32_t>::max())) {
    if (*n == 0) request.thinking = false;
    if (*n > 0) request.thinking = true;
    request.thinking_budget = *n > 0 ? static_cast<int>(*n) : -1;
  }
  ParseGrammarFields(body, request);
  (void)OptionalBool(body, "cache_prompt");
}

void ParseStopField(const Json& body, std::string_view name, GenerationRequest& request) {
  const Json* stop = FindField(body, name);
  if (stop == nullptr) return;
  if (stop->is_string()) {
    if (!stop->get<std::string>().empty()) request.stop.push_back(stop->get<std::string>());
    return;
  }
  if (!stop->is_array()) {
    Fail(ErrorKind::kInvalidArgument,
         std::string(name) + ": expected a string or an array, got " + JsonTypeName(*stop));
  }
  if (stop->size() > kMaxStopStrings) {
    Fail(ErrorKind::kInvalidArgument,
         std::string(name) + ": at most " + std::to_string(kMaxStopStrings) + " stop strings");
  }
  for (size_t i = 0; i < stop->size(); ++i) {
    const Json& s = (*stop)[i];
    if (!s.is_string()) {
      Fail(ErrorKind::kInvalidArgument, std::string(name) + "[" + std::to_string(i) +
                                            "]: expected a string, got " + JsonTypeName(s));
    }
    if (!s.get<std::string>().empty()) request.stop.push_back(s.get<std::string>());
  }
}

void ParseSpeculativeField(const Json& body, GenerationRequest& request) {
  const Json* spec = FindField(body, "speculative");
  if (spec == nullptr) return;
  ExpectType(*spec, "object", "speculative");
  RejectUnknownFields(*spec, {"enabled", "draft_max", "ngram", "suffix", "tree"}, "speculative");
  request.spec_enabled = OptionalBool(*spec, "enabled", "speculative");
  if (auto n = OptionalInteger(*spec, "draft_max", 0, kMaxDraftTokens, "speculative")) {
    request.spec_draft_max = static_cast<int>(*n);
  }
  request.spec_ngram = OptionalBool(*spec, "ngram", "speculative");
  request.spec_suffix = OptionalBool(*spec, "suffix", "speculative");
  if (auto n = OptionalInteger(*spec, "tree", 0, kMaxTreeWidth, "speculative")) {
    if (*n == 1) {
      Fail(ErrorKind::kInvalidArgument, "speculative.tree: 0 (chains) or a width in [2, " +
                                            std::to_string(kMaxTreeWidth) + "], got 1");
    }
    request.spec_tree = static_cast<int>(*n);
  }
}

}  // namespace tandem::server
