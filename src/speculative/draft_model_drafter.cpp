#include "speculative/draft_model_drafter.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "gguf/gguf_reader.h"
#include "model/vocabulary_check.h"
#include "sampling/sampler.h"

namespace tandem {

DraftModelDrafter::DraftModelDrafter(const Gemma4Model& draft, const Gemma4Model& target,
                                     const KvCacheOptions& kv_options, ThreadPool& pool)
    : draft_(draft), pool_(pool) {
  CheckSameVocabulary(draft.file(), draft.config().n_vocab, target.file(), target.config().n_vocab,
                      "draft model");
  KvCacheOptions options = kv_options;
  options.n_seq = 1;
  cache_ = draft.NewKvCache(options);
}

void DraftModelDrafter::Draft(const DraftRequest& r, const KvCache&, DraftResult& out) {
  out.Clear();
  const int V = draft_.config().n_vocab;
  // Keep the longest cached prefix of the committed tokens (the last one is fed below).
  const std::span<const int32_t> committed = r.history.first(r.history.size() - 1);
  size_t common = 0;
  while (common < cached_.size() && common < committed.size() &&
         cached_[common] == committed[common]) {
    ++common;
  }
  if (!cache_->CanTruncateTo(0, static_cast<int32_t>(common))) common = 0;
  cache_->Truncate(0, static_cast<int32_t>(common));
  cached_.resize(common);

  // Catch up: every committed token not yet cached, then `last` with logits.
  std::vector<int32_t> feed(committed.begin() + common, committed.end());
  feed.push_back(r.last);
  std::vector<int32_t> history(r.history.begin(), r.history.end());
  ForwardBatch batch;
  size_t i = 0;
  while (i < feed.size()) {
    const size_t n = std::min<size_t>(feed.size() - i, cache_->max_batch());
    batch.Clear();
    for (size_t j = 0; j < n; ++j) {
      batch.Add(feed[i + j], static_cast<int32_t>(cached_.size()), 0, i + j + 1 == feed.size());
      cached_.push_back(feed[i + j]);
    }
    draft_.Forward(batch, *cache_, out_, pool_);
    i += n;
  }
  for (int k = 0; k < r.n_max; ++k) {
    ++out.steps;
    const float* logits = out_.Logits(0);
    if (r.p_min > 0 && TopKProbabilityOfBest(logits, V) < r.p_min) break;
    int32_t token;
    if (r.sampler == nullptr) {
      token = Argmax(std::span<const float>(logits, V));
    } else {
      std::vector<float> q(V);
      token = r.sampler->Sample(logits, V, history, *r.rng, q);
      out.q.push_back(std::move(q));
    }
    out.tokens.push_back(token);
    history.push_back(token);
    if (k + 1 == r.n_max || static_cast<int>(cached_.size()) + 1 >= cache_->n_ctx()) break;
    batch.Clear();
    batch.Add(token, static_cast<int32_t>(cached_.size()), 0, true);
    cached_.push_back(token);
    draft_.Forward(batch, *cache_, out_, pool_);
  }
  if (static_cast<int>(out.tokens.size()) < r.n_min) {
    out.tokens.clear();
    out.q.clear();
  }
}

}  // namespace tandem
