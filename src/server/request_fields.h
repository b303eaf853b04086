// Request fields the OpenAI and Anthropic bodies share: messages and text content, tools and a
// tool_choice naming one, sampling (temperature, top_p, top_k, min_p, seed, penalties,
// logit_bias), stop strings and tandem's "speculative" extension.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "server/generation_request.h"
#include "server/json_fields.h"

namespace tandem::server {

// Most messages and tools one request may carry (each beyond is a 400 naming the field).
constexpr size_t kMaxMessages = 4096;
constexpr size_t kMaxTools = 512;

// Throws Error(kInvalidArgument) when `array` has more than `max` elements, naming `name`.
void CheckArraySize(const Json& array, size_t max, std::string_view name);

// The body's "messages": a non-empty array of at most kMaxMessages elements.
const Json& MessagesField(const Json& body);

// Reads the body's optional "tools" (an array of at most kMaxTools) into request.tools, each
// element through the dialect's `parse_tool` (given the element and its path, "tools[i]").
void ParseToolsField(const Json& body, GenerationRequest& request,
                     ToolSpec (*parse_tool)(const Json& tool, const std::string& where));

// A string tool_choice of OpenAI's dialects (chat, Responses): "none" drops the tools, "auto"
// keeps them, "required" forces a call. Throws Error(kInvalidArgument) naming the field for
// another string.
void ApplyToolChoiceMode(const std::string& mode, GenerationRequest& request);

// A tool_choice naming one tool: only it stays in request.tools. Throws Error(kInvalidArgument)
// "tool_choice names NOUN 'NAME', which is not among the request's tools" when none is named so.
void KeepNamedTool(const std::string& name, std::string_view noun, GenerationRequest& request);

// How a dialect names the parts of message content in its messages.
struct ContentNames {
  const char* parts;               // the array's elements: "content parts", "blocks"
  const char* part_type;           // a part's type: "content type", "block type"
  const char* served;              // why another type is refused: "tandem serves text only"
  const char* text_type = "text";  // a text part's type ("input_text" in OpenAI's Responses)
  // What a text part may carry besides "type" and "text" (Anthropic's cache_control).
  std::span<const NoOpField> text_part_no_ops = {};
};

// The text of message content: a string as it is, or an array of {"type": TEXT_TYPE, "text": ...}
// parts, concatenated in order. Throws Error(kInvalidArgument) naming `where` for another JSON
// type, and the part's path for a part that is not text ("PATH: TYPE_NAME 'T' is not supported
// (SERVED)").
std::string ContentText(const Json& content, const std::string& where, const ContentNames& names);

// A dialect's media parts of message content: each type's name and the reader of its parts
// (a null reader: the dialect has no such parts).
struct MediaPartReaders {
  std::string_view image_type;
  RequestImage (*read_image)(const Json& part, const std::string& where) = nullptr;
  std::string_view audio_type;
  RequestAudio (*read_audio)(const Json& part, const std::string& where) = nullptr;
};

// Whether `content` is an array holding a media part of `readers`.
bool HasMediaPart(const Json& content, const MediaPartReaders& readers);

// Message content with media, as ChatMessage parts in order: text parts, and media parts read
// by their reader and appended to request.images or request.audio (a part's `media` is its index
// there). Other part types are refused as ContentText refuses them.
std::vector<ContentPart> ContentParts(const Json& content, const std::string& where,
                                      const ContentNames& names, const MediaPartReaders& readers,
                                      GenerationRequest& request);

// The fields ParseSamplingFields reads.
inline constexpr std::string_view kSamplingFields[] = {
    "temperature",       "top_p",          "top_k",         "min_p",     "seed", "presence_penalty",
    "frequency_penalty", "repeat_penalty", "repeat_last_n", "logit_bias"};

// The fields ParseLlamaServerFields reads.
inline constexpr std::string_view kLlamaServerFields[] = {
    "n_predict", "ignore_eos",  "n_probs",     "reasoning_budget",
    "grammar",   "json_schema", "cache_prompt"};

// llama-server's sampling and slot fields that tandem does not implement (mirostat, typical_p,
// DRY, XTC, n_keep, id_slot, ...): a route that takes llama-server's fields accepts them only
// with the value that leaves the output as it is (or "").
std::span<const NoOpField> LlamaServerNoOps();

// What OpenAI's SDKs send about the account's service that changes nothing on one server: a
// service_tier of "auto" or "default" (tandem has one), a prompt_cache_key (every cached prefix is
// reused without a key) and a safety_identifier (an end-user id for the caller's logs). The chat
// and Responses routes accept them so.
std::span<const NoOpField> OpenAiServiceNoOps();

// Reads temperature, top_p, top_k (-1 means off, as 0), min_p, seed (negative: random),
// presence_penalty, frequency_penalty, repeat_penalty, repeat_last_n and logit_bias
// ({"ID": bias} or [[ID, bias], ...]; bias <= -100 bans the token) into request.sampling.
// Throws Error(kInvalidArgument) naming the field.
void ParseSamplingFields(const Json& body, GenerationRequest& request);

// Reads a stop field: a string or an array of at most 16 strings. Empty strings are dropped.
void ParseStopField(const Json& body, std::string_view name, GenerationRequest& request);

// llama-server's fields: n_predict (as max_tokens), ignore_eos, n_probs, reasoning_budget,
// cache_prompt (accepted: prefix reuse is always on and never changes a result), grammar and
// json_schema (constraint_fields.h). The route's field check (CheckFields with
// LlamaServerNoOps()) refuses the ones tandem does not implement.
void ParseLlamaServerFields(const Json& body, GenerationRequest& request);

// Reads "speculative": {"enabled": bool, "draft_max": int in [0, kMaxDraftTokens], "ngram": bool,
// "suffix": bool}; another member is a 400.
void ParseSpeculativeField(const Json& body, GenerationRequest& request);

}  // namespace tandem::server
