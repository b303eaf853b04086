// Drafting with the Gemma 4 MTP assistant: each step feeds the previous draft token and the
// assistant's own next hidden back in, at a constant query position (docs/mtp.md § Drafting).
// A batch runs ONE assistant Step per draft step holding a row for every job still drafting, so
// sequences drafting together pay for their longest draft, not the sum; rows are independent,
// so each job gets exactly the drafts it would get alone. Where the request plans a tree
// (DraftRequest::tree), the step holds a row for each node it branches from.
#pragma once

#include "model/gemma4/assistant.h"
#include "speculative/drafter.h"

namespace tandem {

class MtpDrafter : public Drafter {
 public:
  MtpDrafter(const Gemma4Assistant& assistant, ThreadPool& pool)
      : assistant_(assistant), pool_(pool) {}
  void Draft(const DraftRequest& request, const KvCache& target_cache,
             DraftResult& result) override {
    DraftAlone(*this, request, target_cache, result);
  }
  // Up to request.n_max steps per job, a job leaving early when ChooseDraftToken stops it. A
  // failure confined to one job (its sampler, or its row of a step) fails that job only.
  void DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache) override;
  double BytesPerStep() const override { return assistant_.BytesPerStep(); }
  // A constraint allowing at most this many tokens where the centroid head kept none of them
  // gets them scored by the dense head (Gemma4Assistant::TokenLogits) instead of ending the draft.
  static constexpr int kRescoreMax = 512;

 private:
  // The jobs `which` whose request plans a tree (DraftRequest::tree), drafted together: each
  // step expands every job's frontier (TreeBuilder) in one assistant Step.
  void DraftTrees(std::span<DraftJob> jobs, const std::vector<size_t>& which,
                  const KvCache& target_cache);

  const Gemma4Assistant& assistant_;
  ThreadPool& pool_;
  DraftOutput step_, single_;
};

}  // namespace tandem
