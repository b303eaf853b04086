// One completion request as the server runs it, whatever API (OpenAI chat or completions,
// Anthropic messages, llama-server's /completion) it arrived through: each dialect's parser fills
// it, the one route skeleton (generation_route.h) admits it and hands it to the engine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grammar/constraint_source.h"
#include "multimodal/audio_input.h"
#include "sampling/sampling_params.h"
#include "tokenizer/chat_types.h"

namespace tandem::server {

// An image of the request as sent: its bytes, the media type it claims (empty: none), and where
// it stood ("messages[0].content[1]"), for errors. A ChatMessage's image part indexes
// GenerationRequest::images; a raw prompt's images go where its <__media__> markers are.
struct RequestImage {
  std::vector<uint8_t> bytes;
  std::string mime;
  std::string where;
};

// A recording of the request as sent: its bytes, the format it claims (OpenAI's input_audio
// `format`, or a media type; empty: none) and where it stood. A ChatMessage's audio part indexes
// GenerationRequest::audio.
struct RequestAudio {
  std::vector<uint8_t> bytes;
  std::string format;
  std::string where;
  // Already decoded and prepared by its route (the audio routes need the duration first); the
  // bytes are then unused.
  std::shared_ptr<const PreparedAudio> prepared = nullptr;
};

struct GenerationRequest {
  std::string model;  // as the client named it; empty: the loaded model

  // Chat requests render `messages` and `tools` in the Gemma 4 chat format; the output is parsed
  // into content, reasoning and tool calls. Raw requests encode `prompt` (or take
  // `prompt_tokens`) as they are and return plain text.
  bool chat = true;
  std::vector<ChatMessage> messages;
  std::vector<ToolSpec> tools;  // after tool_choice: none clears it, a named tool keeps only it
  std::vector<RequestImage> images;
  std::vector<RequestAudio> audio;
  // tool_choice "required" / a function (OpenAI), "any" / a tool (Anthropic): the answer is
  // constrained to calls of `tools` (server/constraint_fields.h).
  bool tool_call_required = false;
  bool thinking = false;
  int thinking_budget = -1;  // >= 0 (with thinking): tokens inside the thought channel at most
  std::string prompt;
  std::vector<int32_t> prompt_tokens;  // raw requests given as token ids (prompt then unused)

  bool stream = false;
  bool include_usage = false;  // OpenAI stream_options.include_usage
  int max_tokens = -1;         // -1: the server's default (max_tokens or llama-server n_predict)
  bool ignore_eos = false;     // generate past end-of-generation tokens (until max_tokens)
  int max_tool_calls = 0;      // 0: any; 1: parallel_tool_calls false / disable_parallel_tool_use
  std::vector<std::string> stop;
  // Constrained output (response_format, text.format, grammar, json_schema, structured_outputs):
  // what the fields asked for, compiled when the request starts (server/constraint_fields.h), and
  // the field that asked (empty: unconstrained).
  ConstraintSource constraint;
  std::string constraint_field;
  std::string constraint_schema_field;  // where its schema was, if not constraint_field itself
                                        // (what the schema's compile errors name)
  // JSON constraints (response_format, json_schema, structured_outputs.json) compiled with fixed
  // whitespace (JsonSyntax::kJsonOneLine): the server's --json-one-line, or the request's vLLM
  // `structured_outputs.disable_any_whitespace`. Read before the constraint fields.
  bool json_one_line = false;
  SamplingParams sampling;  // starts as the server's defaults; request fields override
  // Token logprobs (sampling/logprobs.h), -1: not asked. OpenAI chat `logprobs: true` with
  // `top_logprobs`, or completions `logprobs: N`, gives `top_logprobs`; llama-server's `n_probs`.
  int top_logprobs = -1;
  int n_probs = -1;

  // Fields accepted but not fully honoured; reported in the response's `warnings`.
  std::vector<std::string> warnings;

  // Extension field "speculative": {"enabled": bool, "draft_max": int, "ngram": bool,
  // "suffix": bool, "tree": int}.
  std::optional<bool> spec_enabled;
  std::optional<int> spec_draft_max;
  std::optional<bool> spec_ngram;
  std::optional<bool> spec_suffix;
  std::optional<int> spec_tree;
};

}  // namespace tandem::server
