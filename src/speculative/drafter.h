// The drafter interface the speculative loop uses: propose up to n tokens that extend the last
// committed token. Implementations: the MTP assistant (reads the target's KV cache) and a
// separate small draft model (its own cache).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tandem {

class KvCache;
class Rng;
class Sampler;

struct DraftRequest {
  int32_t last = 0;               // the last committed token, not yet in the target cache
  int32_t pos = 0;                // its position
  int32_t seq = 0;                // target cache sequence
  const float* hidden = nullptr;  // target post-norm hidden of the row that produced `last`
  std::span<const int32_t>
      history;  // every committed token (prompt and generated), `last` included
  int n_max = 0;
  int n_min = 0;       // fewer drafts than this: propose none
  float p_min = 0.0f;  // stop at a draft whose top-10-renormalised probability is below this
  Sampler* sampler = nullptr;  // null: greedy drafts; else drafts are sampled from q
  Rng* rng = nullptr;
};

struct DraftResult {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> q;  // per draft token: the distribution it was sampled from
  int steps = 0;                      // drafter forward steps run (cost accounting)
  void Clear() {
    tokens.clear();
    q.clear();
    steps = 0;
  }
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual void Draft(const DraftRequest& request, const KvCache& target_cache,
                     DraftResult& result) = 0;
  // Weight bytes one draft step reads (the static cost model of sampled requests).
  virtual double BytesPerStep() const = 0;
};

// Probability of the best token after keeping the 10 largest logits and renormalising (the
// measure llama.cpp's --draft-p-min compares against).
float TopKProbabilityOfBest(const float* logits, int n_vocab, int k = 10);

}  // namespace tandem
