// Drafting with a separate, smaller gemma4 model (--spec-type draft): it keeps its own KV cache,
// one sequence per target sequence, catches up on the committed tokens each round, and drafts
// autoregressively. A batch merges every job's catch-up rows, and then each draft step's rows,
// into shared forwards (rows are independent: each job gets exactly its drafts alone).
#pragma once

#include <memory>
#include <vector>

#include "kv/kv_cache.h"
#include "model/gemma4/target.h"
#include "speculative/drafter.h"

namespace tandem {

class DraftModelDrafter : public Drafter {
 public:
  // Throws Error(kInvalidArgument) when the draft model's vocabulary differs from the target's.
  DraftModelDrafter(const Gemma4Model& draft, const Gemma4Model& target, ThreadPool& pool);
  // Its cache: the target's options, one sequence per target sequence (DraftRequest::seq).
  void Prepare(const KvCacheOptions& target_kv) override;
  void Draft(const DraftRequest& request, const KvCache& target_cache,
             DraftResult& result) override {
    DraftAlone(*this, request, target_cache, result);
  }
  void DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache) override;
  double BytesPerStep() const override { return draft_.BytesPerToken(); }

 private:
  struct Row {
    size_t job;
    int32_t token, pos;
    bool logits;
  };
  struct Live;
  // Evaluates `rows` in forwards of at most max_batch rows; a job's logits row lands in its
  // live state. When a forward fails, its jobs run one by one, so only the job at fault fails.
  void Run(const std::vector<Row>& rows, std::span<DraftJob> jobs, std::vector<Live>& live);
  void RunChunk(const std::vector<Row>& rows, size_t begin, size_t end, std::span<DraftJob> jobs,
                std::vector<Live>& live);

  const Gemma4Model& draft_;
  ThreadPool& pool_;
  std::unique_ptr<KvCache> cache_;
  std::vector<std::vector<int32_t>> cached_;  // per sequence: tokens whose K/V the cache holds
  ForwardBatch batch_;
  ForwardOutput out_;
};

}  // namespace tandem
