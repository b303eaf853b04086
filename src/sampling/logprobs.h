// Token log-probabilities as the APIs report them (OpenAI logprobs/top_logprobs, llama-server
// n_probs): the log-softmax of the target's raw logits at the emitted position, before logit
// bias, penalties, grammar mask and temperature (vLLM's default, "the model's distribution").
// Computed in a fixed order from one logits row, so they are bitwise the same whenever the row is
// (plain decoding, any speculation, any batch or slot).
#pragma once

#include <cstdint>
#include <vector>

namespace tandem {

// The most top tokens a request may ask for (OpenAI's bound).
inline constexpr int kMaxTopLogprobs = 20;

struct TokenLogprob {
  int32_t token = -1;
  float logprob = 0;
};

struct TokenLogprobs {
  TokenLogprob chosen;            // the emitted token
  std::vector<TokenLogprob> top;  // the most likely tokens, most likely first (ties: lower id)
};

// Fills `out` for the emitted `token` from logits[n_vocab] with the `n_top` most likely tokens
// (n_top is clamped to n_vocab). Throws Error(kInvalidArgument) for n_vocab <= 0, a token outside
// [0, n_vocab) or a NaN or infinite logit.
void ComputeLogprobs(const float* logits, int n_vocab, int32_t token, int n_top,
                     TokenLogprobs& out);

}  // namespace tandem
