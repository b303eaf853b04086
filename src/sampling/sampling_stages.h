// The stages of the sampler chain as separate functions over a candidate list, so each can be
// tested alone. Sampler (sampler.h) runs them in llama.cpp's order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "sampling/sampling_params.h"

namespace tandem::sampling {

struct Candidate {
  float logit;
  int32_t id;
};

// The chain's total order: larger logit first, equal logits by lower token id.
inline bool Before(const Candidate& a, const Candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Tokens still in the running. `sorted` = items are in Before order.
struct CandidateList {
  std::vector<Candidate> items;
  bool sorted = false;
  // The largest logit of `items`, where known (CollectCandidates). Every stage keeps the best
  // candidate, so it stays the maximum down the chain; a list built by hand leaves it unknown.
  bool max_known = false;
  float max_logit = 0.0f;
};

// logits[n_vocab]: adds each bias to its token's logit, in list order. Throws
// Error(kInvalidArgument) for a token id outside [0, n_vocab).
void ApplyLogitBias(std::span<float> logits, std::span<const LogitBias> bias);

// logits[n_vocab]: llama.cpp's penalties over the last `repeat_last_n` tokens of `history`
// (all of it for -1, none for 0). For each distinct token t seen c times in that window:
// logit <= 0 ? logit * repeat_penalty : logit / repeat_penalty, then
// logit -= c * frequency_penalty + presence_penalty. `scratch` is working memory.
// Throws Error(kInvalidArgument) for a window token outside [0, n_vocab).
void ApplyPenalties(std::span<float> logits, std::span<const int32_t> history,
                    const SamplingParams& params, std::vector<int32_t>& scratch);

// Throws Error(kInvalidArgument) naming the first token whose logit is NaN or +inf.
// (-inf is allowed: it marks a banned token.)
void CheckLogits(std::span<const float> logits);

// All tokens whose logit is not -inf, in id order (unsorted).
void CollectCandidates(std::span<const float> logits, CandidateList& out);

// The k best tokens (Before order, -inf excluded) in one pass over `logits` with a k-heap;
// the same result as CollectCandidates followed by TopK, without touching every token twice.
void SelectTopK(std::span<const float> logits, int32_t k, CandidateList& out);

// Keeps the k best candidates (k <= 0 or k >= size: no-op).
void TopK(CandidateList& list, int32_t k);

// Nucleus: with probabilities softmax(logits) over the current candidates, keeps the shortest
// Before-order prefix whose cumulative probability reaches p (and at least max(1, min_keep)
// tokens). p >= 1: no-op. A sorted list is walked; an unsorted one is not sorted but bucketed
// by logit in two linear passes (see SelectNucleus), and stays unsorted.
void TopP(CandidateList& list, float p, int32_t min_keep);

// Keeps candidates with probability >= min_p * (largest probability), compared in logit space
// (logit >= max_logit + log(min_p)), and at least max(1, min_keep). min_p <= 0: no-op.
void MinP(CandidateList& list, float min_p, int32_t min_keep);

// probs[n_vocab]: softmax(logit / temperature) over the candidates, zero elsewhere, computed as
// exp((logit - max) / temperature) / sum. temperature > 0; the list must be non-empty. Sums in
// list order.
void WriteSoftmax(const CandidateList& list, float temperature, std::span<float> probs);

}  // namespace tandem::sampling
