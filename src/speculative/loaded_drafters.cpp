#include "speculative/loaded_drafters.h"

#include "speculative/chain_drafter.h"
#include "speculative/draft_model_drafter.h"
#include "speculative/mtp_drafter.h"

namespace tandem {

DrafterSet MakeDrafters(const Gemma4Model& target, const Gemma4Assistant* assistant,
                        const Gemma4Model* draft_model, ThreadPool& pool) {
  DrafterSet set;
  if (assistant != nullptr) {
    set.mtp = std::make_unique<MtpDrafter>(*assistant, pool);
    set.chain = std::make_unique<ChainDrafter>(set.mtp.get());
  }
  set.lookup = std::make_unique<ChainDrafter>(nullptr);
  if (draft_model != nullptr) {
    set.draft_model = std::make_unique<DraftModelDrafter>(*draft_model, target, pool);
  }
  return set;
}

}  // namespace tandem
