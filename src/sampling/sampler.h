// The sampler chain: logits + token history -> the final probability vector, and the draw.
//
// The chain is split in two so speculative decoding can use it (docs/mtp.md § Verification):
// Distribution() is deterministic and RNG-free (the target's p and the drafter's q at any
// position, given the history up to it), and SampleFrom() is the only place randomness enters.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/rng.h"
#include "sampling/sampling_params.h"
#include "sampling/sampling_stages.h"

namespace tandem {

class Sampler {
 public:
  // Validates `params` (throws Error(kInvalidArgument), see ValidateSamplingParams).
  explicit Sampler(SamplingParams params);

  const SamplingParams& params() const { return params_; }

  // probs[n_vocab] = the distribution the next token is drawn from, given logits[n_vocab] and
  // the tokens before it (`history`: prompt and generated tokens, oldest first; the penalties
  // read its last repeat_last_n). Runs logit bias -> penalties -> top-k -> top-p -> min-p ->
  // temperature -> softmax; filtered tokens get exactly 0. Greedy (temperature <= 0) gives a
  // one-hot vector on the argmax of the biased and penalised logits, ties to the lowest id.
  // Deterministic: the same inputs give bitwise the same probs, whatever ran before.
  // Throws Error(kInvalidArgument) for n_vocab <= 0, probs.size() != n_vocab, a NaN or +inf
  // logit, a bias or history token outside the vocabulary, or when every token is banned.
  // Not thread-safe (reuses scratch buffers): one Sampler per request.
  void Distribution(const float* logits, int n_vocab, std::span<const int32_t> history,
                    std::span<float> probs);
  std::vector<float> Distribution(const float* logits, int n_vocab,
                                  std::span<const int32_t> history);

  // Distribution() then SampleFrom(); `probs` (n_vocab floats) receives the distribution.
  int32_t Sample(const float* logits, int n_vocab, std::span<const int32_t> history, Rng& rng,
                 std::span<float> probs);

 private:
  SamplingParams params_;
  std::vector<float> adjusted_;  // [n_vocab] logits after bias and penalties
  std::vector<int32_t> window_;  // penalty window, sorted
  sampling::CandidateList candidates_;
  int32_t greedy_token_ = 0;  // the last greedy Distribution's token
};

// Draws a token from probs[n] (non-negative weights, not necessarily normalised) with one
// uniform u = rng.Uniform(): the smallest id whose cumulative weight (summed in id order, in
// double) exceeds u * total. Zero-weight tokens are never drawn. Throws Error(kInvalidArgument)
// for an empty vector, a negative or NaN weight, or an all-zero vector.
int32_t SampleFrom(std::span<const float> probs, Rng& rng);

// Index of the largest value, ties to the lowest index; NaNs are ignored. Throws
// Error(kInvalidArgument) if `values` is empty or all NaN.
int32_t Argmax(std::span<const float> values);

}  // namespace tandem
