// GenerationRequest → prompt ids and engine parameters.
#include "server/request_to_prompt.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "speculative/drafter_registry.h"
#include "speculative/grammar_constraint.h"
#include "tokenizer/chat_format.h"

namespace tandem::server {
void CheckTokenId(int64_t id, const Tokenizer& tokenizer, const std::string& what) {
  if (id < 0 || id >= tokenizer.n_tokens()) {
    Fail(ErrorKind::kInvalidArgument, what + ": token id " + std::to_string(id) +
                                          " is outside the vocabulary [0, " +
                                          std::to_string(tokenizer.n_tokens()) + ")");
  }
}

std::vector<int32_t> EncodePrompt(const GenerationRequest& request, const Tokenizer& tokenizer,
                                  const ModelLimits& limits) {
  std::vector<int32_t> ids;
  if (request.chat) {
    if (request.messages.empty()) Fail(ErrorKind::kInvalidArgument, "messages must not be empty");
    ChatRenderOptions render = limits.render;
    render.thinking = request.thinking;
    const std::string text = RenderChat(request.messages, request.tools, render);
    ids = tokenizer.Encode(text, {.add_special = !render.add_bos, .parse_special = true});
  } else if (!request.prompt_tokens.empty()) {
    for (int32_t id : request.prompt_tokens) CheckTokenId(id, tokenizer, "prompt");
    ids = request.prompt_tokens;
  } else {
    ids = tokenizer.Encode(request.prompt, {.add_special = true, .parse_special = true});
  }
  if (ids.empty()) Fail(ErrorKind::kInvalidArgument, "the prompt is empty");
  return ids;
}

std::vector<int32_t> BuildPrompt(const GenerationRequest& request, const Tokenizer& tokenizer,
                                 const ModelLimits& limits) {
  std::vector<int32_t> ids = EncodePrompt(request, tokenizer, limits);
  if (static_cast<int64_t>(ids.size()) >= limits.n_ctx) {
    Fail(ErrorKind::kInvalidArgument,
         "the prompt has " + std::to_string(ids.size()) + " tokens but the context is " +
             std::to_string(limits.n_ctx) + " (it must leave room for at least one new token)");
  }
  return ids;
}

GenerateParams BuildGenerateParams(const GenerationRequest& request, const Tokenizer& tokenizer,
                                   const ModelLimits& limits,
                                   std::shared_ptr<CompiledGrammar> grammar) {
  GenerateParams p;
  p.n_predict = request.max_tokens > 0 ? request.max_tokens : limits.default_n_predict;
  p.sampling = request.sampling;
  for (const LogitBias& b : p.sampling.logit_bias) CheckTokenId(b.token, tokenizer, "logit_bias");
  ValidateSamplingParams(p.sampling);
  if (!request.ignore_eos) p.eog_tokens = tokenizer.eog_ids();
  p.top_logprobs = std::max(request.top_logprobs, request.n_probs);
  p.grammar = MakeGrammarConstraint(std::move(grammar), tokenizer, request.thinking,
                                    request.chat ? request.thinking_budget : -1);

  p.spec = limits.spec;
  const bool available = limits.spec.type != SpecType::kNone;
  if (request.spec_enabled.has_value()) {
    if (*request.spec_enabled && !available) {
      Fail(ErrorKind::kInvalidArgument,
           "speculative.enabled = true, but the server runs without speculative decoding "
           "(start it with an MTP assistant: -md FILE)");
    }
    if (!*request.spec_enabled) p.spec.type = SpecType::kNone;
  }
  if (request.spec_draft_max.has_value()) {
    if (!available && *request.spec_draft_max > 0) {
      Fail(ErrorKind::kInvalidArgument,
           "speculative.draft_max is set, but the server runs without speculative decoding "
           "(start it with an MTP assistant: -md FILE)");
    }
    if (*request.spec_draft_max == 0) {
      p.spec.type = SpecType::kNone;
    } else {
      p.spec.draft_max = *request.spec_draft_max;
      if (p.spec.draft_min > p.spec.draft_max) p.spec.draft_min = p.spec.draft_max;
    }
  }
  // Suffix drafting first: a request turning both off on suffix-chain gets chain's without
  // lookup (mtp).
  if (request.spec_suffix.has_value()) {
    if (*request.spec_suffix && !UsesSuffix(p.spec.type)) {
      Fail(ErrorKind::kInvalidArgument,
           "speculative.suffix = true, but this request does not draft from earlier requests "
           "(start the server with --spec-type " +
               DrafterNamesWhere(&DrafterEntry::suffix) + ")");
    }
    if (!*request.spec_suffix) {
      p.spec.suffix = false;
      p.spec.type = WithoutSuffix(p.spec.type);
    }
  }
  if (request.spec_tree.has_value()) {
    if (*request.spec_tree > 0 &&
        (p.spec.type == SpecType::kNone || !DrafterEntryOf(p.spec.type).trees)) {
      Fail(ErrorKind::kInvalidArgument,
           "speculative.tree is set, but this request does not draft trees (start the server "
           "with an MTP assistant, -md FILE, and --spec-type " +
               DrafterNamesWhere(&DrafterEntry::trees) + ")");
    }
    p.spec.tree_width = *request.spec_tree;
  }
  if (request.spec_ngram.has_value()) {
    if (*request.spec_ngram && !UsesNgram(p.spec.type)) {
      Fail(ErrorKind::kInvalidArgument,
           "speculative.ngram = true, but this request does not draft by prompt lookup (start "
           "the server with --spec-type " +
               DrafterNamesWhere(&DrafterEntry::lookup) + ")");
    }
    if (!*request.spec_ngram) {
      p.spec.ngram = false;
      p.spec.type = WithoutLookup(p.spec.type);
    }
  }
  return p;
}

}  // namespace tandem::server
