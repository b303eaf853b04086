// What the user asked of speculative decoding: which drafter, the draft-length limits. Each
// option's default is here (SpecOptions), each limit (kMaxDraftTokens, kMaxNgramLength), and the
// one check of them (ValidateSpecOptions), which the command line, the server and the engine use.
#pragma once

#include <string_view>

namespace tandem {

enum class SpecType {
  kNone,   // plain decoding
  kMtp,    // the target's MTP assistant (gemma4-assistant), reading the target's KV cache
  kDraft,  // a separate, smaller gemma4 model with its own KV cache
  kNgram,  // prompt lookup over the context (DraftPlanner, ChainDrafter), no model
  kChain,  // prompt lookup first, the MTP assistant extending where it ends
};

// The most tokens one round drafts from one source: a request's draft_max through the API, an
// adaptive round's prompt-lookup proposal, a grammar-forced run a draft goes on through.
inline constexpr int kMaxDraftTokens = 64;
// The longest context suffix prompt lookup matches (ngram_max).
inline constexpr int kMaxNgramLength = 64;

struct SpecOptions {
  SpecType type = SpecType::kNone;
  int draft_max = 16;        // most tokens drafted per round (llama.cpp --draft-max)
  int draft_min = 0;         // a round drafting fewer is dropped (plain step instead)
  float draft_p_min = 0.0f;  // stop drafting when the draft's top-10 probability falls below
  bool adaptive = true;      // choose each round's length from measured acceptance and costs
  int ngram_min = 3;         // shortest context suffix looked up (kNgram, kChain) ...
  int ngram_max = 8;         // ... longest (the longest that recurs is used)
};

// Whether `type` drafts by prompt lookup.
inline bool UsesNgram(SpecType type) {
  return type == SpecType::kNgram || type == SpecType::kChain;
}

const char* SpecTypeName(SpecType type);

// Throws Error(kInvalidArgument), the message starting with `what` (the flags or fields that set
// them), unless 1 <= min <= max <= kMaxNgramLength.
void ValidateNgramLengths(int min, int max, std::string_view what);

// Throws Error(kInvalidArgument) unless 0 <= draft_min <= draft_max and draft_p_min is in [0, 1],
// and, when `spec.type` drafts by prompt lookup, its n-gram lengths pass ValidateNgramLengths.
void ValidateSpecOptions(const SpecOptions& spec);

}  // namespace tandem
