// The sampler chain (llama.cpp's default order) and the seeded draw.
#include "sampling/sampler.h"

#include <cmath>
#include <string>
#include <utility>

#include "base/error.h"
#include "sampling/vocab_scan.h"

namespace tandem {

using sampling::CandidateList;

Sampler::Sampler(SamplingParams params) : params_(std::move(params)) {
  ValidateSamplingParams(params_);
}

void Sampler::Distribution(const float* logits, int n_vocab, std::span<const int32_t> history,
                           std::span<float> probs) {
  if (n_vocab <= 0 || logits == nullptr) {
    Fail(ErrorKind::kInvalidArgument,
         "sampling: no logits (n_vocab = " + std::to_string(n_vocab) + ")");
  }
  if (probs.size() != static_cast<size_t>(n_vocab)) {
    Fail(ErrorKind::kInvalidArgument, "sampling: probs holds " + std::to_string(probs.size()) +
                                          " floats, n_vocab is " + std::to_string(n_vocab));
  }
  const size_t n = static_cast<size_t>(n_vocab);
  // Bias and penalties edit a copy; with neither active the chain reads `logits` directly.
  std::span<const float> current(logits, n);
  const bool penalties = params_.repeat_last_n != 0 && !history.empty() &&
                         (params_.repeat_penalty != 1.0f || params_.presence_penalty != 0.0f ||
                          params_.frequency_penalty != 0.0f);
  if (!params_.logit_bias.empty() || penalties) {
    adjusted_.assign(logits, logits + n);
    sampling::ApplyLogitBias(adjusted_, params_.logit_bias);
    sampling::ApplyPenalties(adjusted_, history, params_, window_);
    current = adjusted_;
  }
  sampling::CheckLogits(current);

  if (params_.greedy()) {
    const int32_t best = Argmax(current);
    if (current[best] == -INFINITY) {
      Fail(ErrorKind::kInvalidArgument, "sampling: every token is banned (all logits -inf)");
    }
    std::fill(probs.begin(), probs.end(), 0.0f);
    probs[best] = 1.0f;
    greedy_token_ = best;
    return;
  }

  sampling::SelectTopK(current, params_.top_k, candidates_);
  if (candidates_.items.empty()) {
    Fail(ErrorKind::kInvalidArgument, "sampling: every token is banned (all logits -inf)");
  }
  sampling::TopP(candidates_, params_.top_p, params_.min_keep);
  sampling::MinP(candidates_, params_.min_p, params_.min_keep);
  sampling::WriteSoftmax(candidates_, params_.temperature, probs);
}

std::vector<float> Sampler::Distribution(const float* logits, int n_vocab,
                                         std::span<const int32_t> history) {
  std::vector<float> probs(n_vocab > 0 ? n_vocab : 0);
  Distribution(logits, n_vocab, history, probs);
  return probs;
}

int32_t Sampler::Sample(const float* logits, int n_vocab, std::span<const int32_t> history,
                        Rng& rng, std::span<float> probs) {
  Distribution(logits, n_vocab, history, probs);
  if (params_.greedy()) {
    // What SampleFrom returns for the one-hot distribution, after the same one draw, without
    // walking the vocabulary's zeros.
    rng.Uniform();
    return greedy_token_;
  }
  return SampleFrom(probs, rng);
}

int32_t SampleFrom(std::span<const float> probs, Rng& rng) {
  if (probs.empty()) Fail(ErrorKind::kInvalidArgument, "sampling: empty probability vector");
  // Zeros are skipped (adding 0 changes no sum): the chain's vectors are mostly zeros.
  // Whole blocks of zeros are skipped a block at a time (top-k leaves a few dozen non-zeros).
  using sampling::kScanBlock;
  using sampling::ZeroBlockAt;
  const size_t n = probs.size();
  double total = 0.0;
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    if (ZeroBlockAt(probs, i)) {
      i += kScanBlock - 1;
      continue;
    }
    const float p = probs[i];
    if (p == 0.0f) continue;
    ok &= p > 0.0f;  // false for negatives and NaN
    total += p;
  }
  if (!ok || !std::isfinite(total)) {
    for (size_t i = 0; i < probs.size(); ++i) {
      if (!(probs[i] >= 0.0f) || std::isinf(probs[i])) {
        Fail(ErrorKind::kInvalidArgument, "sampling: probability of token " + std::to_string(i) +
                                              " is " + std::to_string(probs[i]));
      }
    }
  }
  if (!(total > 0.0)) Fail(ErrorKind::kInvalidArgument, "sampling: all probabilities are zero");
  const double target = rng.Uniform() * total;
  double cumulative = 0.0;
  int32_t last_positive = 0;
  for (size_t i = 0; i < n; ++i) {
    if (ZeroBlockAt(probs, i)) {
      i += kScanBlock - 1;
      continue;
    }
    if (probs[i] == 0.0f) continue;
    cumulative += probs[i];
    last_positive = static_cast<int32_t>(i);
    if (cumulative > target) return last_positive;
  }
  // Only reachable when u * total rounds up to total: the last token with weight wins.
  return last_positive;
}

int32_t Argmax(std::span<const float> values) {
  // The first index holding the maximum: the element-by-element scan's answer (its `>` keeps
  // the first of equal values, and -0 == +0).
  const size_t i = sampling::FirstEqual(values, sampling::MaxIgnoringNan(values));
  if (i < values.size()) return static_cast<int32_t>(i);
  Fail(ErrorKind::kInvalidArgument, "sampling: argmax of no (non-NaN) values");
}

}  // namespace tandem
