// Log-softmax of one logits row, the chosen token's value and the top-n.
#include "sampling/logprobs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "sampling/vector_exp.h"
#include "sampling/vocab_scan.h"

namespace tandem {

void ComputeLogprobs(const float* logits, int n_vocab, int32_t token, int n_top,
                     TokenLogprobs& out) {
  if (n_vocab <= 0) Fail(ErrorKind::kInvalidArgument, "logprobs: empty vocabulary");
  if (token < 0 || token >= n_vocab) {
    Fail(ErrorKind::kInvalidArgument, "logprobs: token " + std::to_string(token) +
                                          " is outside [0, " + std::to_string(n_vocab) + ")");
  }
  const std::span<const float> row(logits, static_cast<size_t>(n_vocab));
  if (!sampling::AllBelowInfinity(row, /*finite=*/true)) {
    for (int i = 0; i < n_vocab; ++i) {
      if (!std::isfinite(logits[i])) {
        Fail(ErrorKind::kInvalidArgument,
             "logprobs: logit " + std::to_string(i) + " is not finite");
      }
    }
  }
  const float max = sampling::MaxIgnoringNan(row);
  // log p_i = (x_i - max) - log(sum_j exp(x_j - max)), the exps (vector_exp.h, a few thousand at
  // a time) summed in double in four partial sums by id modulo 4, then (s0 + s1) + (s2 + s3):
  // one sum in id order waited on each addition's latency.
  constexpr int kChunk = 4096;
  float exps[kChunk];
  double partial[4] = {0, 0, 0, 0};
  for (int i = 0; i < n_vocab; i += kChunk) {
    const int n = std::min(kChunk, n_vocab - i);
    sampling::ExpRow(logits + i, static_cast<size_t>(n), max, 1.0f, exps);
    int j = 0;
    for (; j + 4 <= n; j += 4) {
      partial[0] += exps[j];
      partial[1] += exps[j + 1];
      partial[2] += exps[j + 2];
      partial[3] += exps[j + 3];
    }
    for (; j < n; ++j) partial[j % 4] += exps[j];  // (i is a multiple of 4)
  }
  const double sum = (partial[0] + partial[1]) + (partial[2] + partial[3]);
  const double log_sum = std::log(sum);
  const auto logprob = [&](int32_t i) {
    return static_cast<float>(static_cast<double>(logits[i] - max) - log_sum);
  };
  out.chosen = {token, logprob(token)};
  out.top.clear();
  const int n = std::clamp(n_top, 0, n_vocab);
  if (n == 0) return;
  // The n largest logits, ties to the lower id (kept as a sorted list: n is small).
  std::vector<int32_t> best;
  best.reserve(n + 1);
  for (int32_t i = 0; i < n_vocab; ++i) {
    // Once n are kept, a block whose largest logit does not beat the last kept is skipped whole.
    if (static_cast<int>(best.size()) == n &&
        sampling::BlockNotAboveAt(row, i, logits[best.back()])) {
      i += static_cast<int>(sampling::kScanBlock) - 1;
      continue;
    }
    if (static_cast<int>(best.size()) == n && logits[i] <= logits[best.back()]) continue;
    const auto at = std::upper_bound(best.begin(), best.end(), i,
                                     [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    best.insert(at, i);
    if (static_cast<int>(best.size()) > n) best.pop_back();
  }
  for (const int32_t i : best) out.top.push_back({i, logprob(i)});
}

}  // namespace tandem
