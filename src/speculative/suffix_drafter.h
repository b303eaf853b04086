// The drafter of --spec-type suffix and suffix-chain: suffix drafting, drafts from earlier
// requests' text. Its proposals come from the server's one SuffixIndex (suffix_index.h, shared by
// both types), per tenant; DraftPlanner asks for them (Drafter::ProposeFromPast) beside prompt
// lookup's and chooses per round which of the two proposes, and the round is then drafted as
// lookup's is (ChainDrafter: the proposal first, the MTP assistant extending it for
// suffix-chain, nothing for suffix). Every request it served adds its prompt and output to the
// index when it ends (Drafter::LearnRequest).
#pragma once

#include <memory>

#include "speculative/chain_drafter.h"
#include "speculative/suffix_index.h"

namespace tandem {

class SuffixDrafter : public Drafter {
 public:
  // `model` (may be null: free drafts only) extends the proposals; it must outlive this.
  SuffixDrafter(std::shared_ptr<SuffixIndex> index, Drafter* model)
      : index_(std::move(index)), chain_(model) {}
  void Draft(const DraftRequest& request, const KvCache& target_cache,
             DraftResult& result) override {
    DraftAlone(*this, request, target_cache, result);
  }
  void DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache) override {
    chain_.DraftBatch(jobs, target_cache);
  }
  double BytesPerStep() const override { return chain_.BytesPerStep(); }
  std::vector<int32_t> ProposeFromPast(std::string_view tenant, std::span<const int32_t> context,
                                       int n_max, int* match) override;
  void LearnRequest(std::string_view tenant, std::span<const int32_t> tokens) override {
    index_->Add(tenant, tokens);
  }

  const std::shared_ptr<SuffixIndex>& index() const { return index_; }

 private:
  std::shared_ptr<SuffixIndex> index_;
  ChainDrafter chain_;
};

}  // namespace tandem
