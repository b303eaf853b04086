// Per-request sampling settings with llama.cpp / OpenAI names and llama.cpp's defaults.
#pragma once

#include <cstdint>
#include <vector>

namespace tandem {

// llama.cpp's LLAMA_DEFAULT_SEED: "pick a random seed" (see ResolveSeed in rng.h).
inline constexpr uint64_t kRandomSeed = 0xFFFFFFFFu;

// One additive bias on a token's logit; bias = -infinity bans the token.
struct LogitBias {
  int32_t token = 0;
  float bias = 0.0f;
};

// The sampler chain runs, in this order (llama.cpp's default, docs/formats.md § Sampler chain):
//   logit_bias → penalties (over the last repeat_last_n history tokens) → top_k → top_p → min_p
//   → temperature → draw.
// Every stage at its neutral value is a no-op. temperature <= 0 means greedy (argmax after the
// bias and penalties; ties go to the lowest token id). top_p and min_p look at the distribution
// at temperature 1 (temperature is applied after them, as in llama.cpp).
struct SamplingParams {
  float temperature = 0.8f;           // <= 0: greedy
  int32_t top_k = 40;                 // keep the k largest logits; 0: off
  float top_p = 0.95f;                // nucleus, in (0, 1]; 1: off
  float min_p = 0.05f;                // keep p >= min_p * p_max, in [0, 1]; 0: off
  int32_t min_keep = 0;               // top_p and min_p keep at least this many tokens (and >= 1)
  float repeat_penalty = 1.0f;        // > 0; 1: off. Positive logits / r, negative logits * r
  int32_t repeat_last_n = 64;         // penalty window in history tokens; 0: off, -1: whole history
  float presence_penalty = 0.0f;      // subtracted once from every token seen in the window
  float frequency_penalty = 0.0f;     // subtracted once per occurrence in the window
  std::vector<LogitBias> logit_bias;  // applied in order; a token may appear more than once
  uint64_t seed = kRandomSeed;        // draw seed (64 bits); kRandomSeed asks for a random one

  bool greedy() const { return !(temperature > 0.0f); }
};

// Checks every field; throws Error(kInvalidArgument) naming the field and its value, e.g.
// "sampling: top_p = 1.5 is outside (0, 1]". Token ids in logit_bias are checked against the
// vocabulary when the sampler runs (the vocabulary size is not known here).
void ValidateSamplingParams(const SamplingParams& params);

}  // namespace tandem
