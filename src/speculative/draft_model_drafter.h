// Drafting with a separate, smaller gemma4 model (--spec-type draft): it keeps its own KV cache,
// catches up on the committed tokens each round, and drafts autoregressively.
#pragma once

#include <memory>
#include <vector>

#include "kv/kv_cache.h"
#include "model/gemma4_model.h"
#include "speculative/drafter.h"

namespace tandem {

class DraftModelDrafter : public Drafter {
 public:
  // Throws Error(kInvalidArgument) when the draft model's vocabulary differs from the target's.
  DraftModelDrafter(const Gemma4Model& draft, const Gemma4Model& target,
                    const KvCacheOptions& kv_options, ThreadPool& pool);
  void Draft(const DraftRequest& request, const KvCache& target_cache,
             DraftResult& result) override;
  double BytesPerStep() const override { return draft_.BytesPerToken(); }

 private:
  const Gemma4Model& draft_;
  ThreadPool& pool_;
  std::unique_ptr<KvCache> cache_;
  std::vector<int32_t> cached_;  // tokens whose K/V the draft cache holds
  ForwardOutput out_;
};

}  // namespace tandem
