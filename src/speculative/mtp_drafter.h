// Drafting with the Gemma 4 MTP assistant: each step feeds the previous draft token and the
// assistant's own next hidden back in, at a constant query position (docs/mtp.md § Drafting).
#pragma once

#include "model/gemma4_assistant.h"
#include "speculative/drafter.h"

namespace tandem {

class MtpDrafter : public Drafter {
 public:
  MtpDrafter(const Gemma4Assistant& assistant, ThreadPool& pool)
      : assistant_(assistant), pool_(pool) {}
  void Draft(const DraftRequest& request, const KvCache& target_cache,
             DraftResult& result) override;
  double BytesPerStep() const override { return assistant_.BytesPerStep(); }

 private:
  const Gemma4Assistant& assistant_;
  ThreadPool& pool_;
  DraftOutput step_;
  std::vector<float> hidden_;
  std::vector<int32_t> history_;
};

}  // namespace tandem
