// The drafter of --spec-type ngram and chain: a round's draft is the prompt-lookup proposal
// (DraftRequest::lookup, chosen by DraftPlanner) followed, up to n_max tokens, by what the model
// drafter (the MTP assistant; none for ngram) drafts extending it. One verify batch holds both.
//
// The model's input for tokens it did not draft (docs/mtp.md § Chained drafting): its first step
// extends the last lookup token (the last committed token when lookup proposed nothing), with the
// target's post-norm hidden of the last verified row (DraftRequest::hidden, the only hidden there
// is: the lookup tokens were never run through the target), at the constant query position of
// the last committed token, reading only the committed KV cache. The sampler history (and so a
// sampled draft's q) includes the lookup tokens. Lookup tokens are point masses: empty q.
#pragma once

#include <vector>

#include "speculative/drafter.h"

namespace tandem {

class ChainDrafter : public Drafter {
 public:
  // `model` (may be null: lookup only) drafts the extensions; it must outlive this.
  explicit ChainDrafter(Drafter* model) : model_(model) {}
  void Draft(const DraftRequest& request, const KvCache& target_cache,
             DraftResult& result) override {
    DraftAlone(*this, request, target_cache, result);
  }
  // Every job's extension is drafted in one model DraftBatch.
  void DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache) override;
  double BytesPerStep() const override { return model_ ? model_->BytesPerStep() : 0.0; }

 private:
  Drafter* model_;
  std::vector<DraftJob> extend_;
  std::vector<std::vector<int32_t>> history_;  // [extend_] committed tokens + lookup
};

}  // namespace tandem
