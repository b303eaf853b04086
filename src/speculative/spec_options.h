// What the user asked of speculative decoding: which drafter, and the draft-length limits.
#pragma once

#include <string>

namespace tandem {

enum class SpecType {
  kNone,   // plain decoding
  kMtp,    // the target's MTP assistant (gemma4-assistant), reading the target's KV cache
  kDraft,  // a separate, smaller gemma4 model with its own KV cache
  kNgram,  // prompt lookup over the context (DraftPlanner, ChainDrafter), no model
  kChain,  // prompt lookup first, the MTP assistant extending where it ends
};

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

}  // namespace tandem
