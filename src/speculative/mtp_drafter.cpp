#include "speculative/mtp_drafter.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sampling/sampler.h"

namespace tandem {

float TopKProbabilityOfBest(const float* logits, int n_vocab, int k) {
  std::vector<float> top(logits, logits + n_vocab);
  k = std::min(k, n_vocab);
  std::partial_sort(top.begin(), top.begin() + k, top.end(), std::greater<float>());
  if (std::isinf(top[0]) && top[0] < 0) return 0.0f;
  double sum = 0;
  for (int i = 0; i < k; ++i) sum += std::exp(double(top[i]) - double(top[0]));
  return static_cast<float>(1.0 / sum);
}

void MtpDrafter::Draft(const DraftRequest& r, const KvCache& target_cache, DraftResult& out) {
  out.Clear();
  const int B = assistant_.n_embd_out();
  hidden_.assign(r.hidden, r.hidden + B);
  history_.assign(r.history.begin(), r.history.end());
  int32_t token = r.last;
  for (int i = 0; i < r.n_max; ++i) {
    assistant_.Step({DraftRow{token, r.pos, r.seq, hidden_.data()}}, target_cache, step_, pool_);
    ++out.steps;
    const float* logits = step_.Logits(0);
    const int V = step_.n_vocab;
    if (r.p_min > 0 && TopKProbabilityOfBest(logits, V) < r.p_min) break;
    if (r.sampler == nullptr) {
      token = Argmax(std::span<const float>(logits, V));
    } else {
      std::vector<float> q(V);
      token = r.sampler->Sample(logits, V, history_, *r.rng, q);
      out.q.push_back(std::move(q));
    }
    out.tokens.push_back(token);
    history_.push_back(token);
    hidden_.assign(step_.Hidden(0), step_.Hidden(0) + B);
  }
  if (static_cast<int>(out.tokens.size()) < r.n_min) {
    out.tokens.clear();
    out.q.clear();
  }
}

}  // namespace tandem
