// Turns a parsed GenerationRequest into what the engine runs: prompt token ids (chat messages
// rendered in the Gemma 4 format, or raw text) and GenerateParams, checked against the model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/request.h"
#include "grammar/compiled_grammar.h"
#include "server/generation_request.h"
#include "speculative/spec_options.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

namespace tandem::server {

// What the loaded model and the command line fix for every request.
struct ModelLimits {
  int n_ctx = 4096;            // per slot
  int default_n_predict = -1;  // used when the request gives no max_tokens
  SpecOptions spec;            // the server's speculation (type kNone: no assistant loaded)
  // Base render options; `thinking` comes from the request. empty_thought_when_thinking_off is
  // true for models without per-layer embeddings (26B/31B templates).
  ChatRenderOptions render;
};

// Throws Error(kInvalidArgument) "WHAT: token id N is outside the vocabulary [0, V)" unless `id`
// is one of the tokenizer's.
void CheckTokenId(int64_t id, const Tokenizer& tokenizer, const std::string& what);

// Prompt token ids. Chat: RenderChat(messages, tools) then Encode with special tokens parsed
// (the rendered text carries <bos>). Raw: prompt_tokens as given, or Encode(prompt) with BOS.
// Throws Error(kInvalidArgument) for an empty conversation, a token id outside the vocabulary,
// rendering errors (tool messages out of place, bad arguments) and a prompt that does not fit:
// "the prompt has N tokens but the context is M".
std::vector<int32_t> BuildPrompt(const GenerationRequest& request, const Tokenizer& tokenizer,
                                 const ModelLimits& limits);
// BuildPrompt without the context check (count_tokens).
std::vector<int32_t> EncodePrompt(const GenerationRequest& request, const Tokenizer& tokenizer,
                                  const ModelLimits& limits);

// Engine parameters: n_predict (max_tokens or the default), sampling (validated, logit-bias ids
// checked against the vocabulary), speculation with the request's overrides, EOG ids, and the
// constraint: `grammar` (the request's compiled one, or null) with the thinking budget (chat).
// Throws Error(kInvalidArgument), e.g. when speculation is requested and no assistant is loaded.
GenerateParams BuildGenerateParams(const GenerationRequest& request, const Tokenizer& tokenizer,
                                   const ModelLimits& limits,
                                   std::shared_ptr<CompiledGrammar> grammar = nullptr);

}  // namespace tandem::server
