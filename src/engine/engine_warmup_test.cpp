// The warm-up (EngineOptions::warmup): it runs every loaded model drafter before the first
// request, and leaves no trace: metrics, caches, request ids and every request's tokens are what
// an engine without it gives.
#include <gtest/gtest.h>

#include <memory>

#include "engine/engine_test_util.h"
#include "speculative/loaded_drafters.h"

namespace tandem {
namespace {

using testing_engine::Greedy;
using testing_engine::Models;
using testing_engine::Outcome;
using testing_engine::Prompt;
using testing_engine::Recorder;
using testing_engine::RunAlone;
using testing_engine::Sampled;
using testing_engine::WithDraftModel;
using testing_engine::WithMtp;

// Forwards to another drafter, counting the draft steps it ran.
class CountingDrafter : public Drafter {
 public:
  explicit CountingDrafter(std::unique_ptr<Drafter> inner) : inner_(std::move(inner)) {}
  void Prepare(const KvCacheOptions& kv) override { inner_->Prepare(kv); }
  void Draft(const DraftRequest& request, const KvCache& cache, DraftResult& result) override {
    inner_->Draft(request, cache, result);
    steps_ += result.steps;
  }
  void DraftBatch(std::span<DraftJob> jobs, const KvCache& cache) override {
    inner_->DraftBatch(jobs, cache);
    for (const DraftJob& job : jobs) steps_ += job.result.steps;
  }
  double BytesPerStep() const override { return inner_->BytesPerStep(); }
  int steps() const { return steps_; }

 private:
  std::unique_ptr<Drafter> inner_;
  int steps_ = 0;
};

TEST(EngineWarmup, RunsEachModelDrafterAndLeavesNoTrace) {
  const KvCacheOptions kv = {.type = TensorType::kF16, .n_ctx = 128, .n_seq = 1, .max_batch = 32};
  ThreadPool pool(2);
  DrafterSet loaded =
      MakeDrafters({*Models().target, Models().assistant.get(), Models().draft.get(), pool});
  DrafterSet drafters;
  auto* mtp = new CountingDrafter(loaded.Take(SpecType::kMtp));
  auto* draft = new CountingDrafter(loaded.Take(SpecType::kDraft));
  drafters.Set(SpecType::kMtp, std::unique_ptr<Drafter>(mtp));
  drafters.Set(SpecType::kDraft, std::unique_ptr<Drafter>(draft));
  EngineOptions options;
  options.n_slots = 2;
  options.kv = kv;
  options.warmup = true;
  Engine engine(*Models().target, std::move(drafters), pool, options);

  EXPECT_GT(mtp->steps(), 0) << "the warm-up drafted nothing with the MTP assistant";
  EXPECT_GT(draft->steps(), 0) << "the warm-up drafted nothing with the draft model";
  const EngineMetrics before = engine.Metrics();
  EXPECT_EQ(before.requests_started, 0);
  EXPECT_EQ(before.requests_finished, 0);
  EXPECT_EQ(before.generated_tokens, 0);
  EXPECT_EQ(before.prompt_tokens, 0);
  EXPECT_EQ(before.spec.drafted, 0);
  EXPECT_EQ(before.kv_used_positions, 0);
  EXPECT_EQ(before.generate_seconds, 0);
  for (const SlotMetrics& slot : before.slots) {
    EXPECT_EQ(slot.requests, 0);
    EXPECT_EQ(slot.spec.drafted, 0);
  }
  for (int s = 0; s < options.n_slots; ++s) EXPECT_EQ(engine.cache().Length(s), 0);

  // The warm-up's prompt again (2, 3, 4, 5): a cache it left behind would serve its prefix.
  const std::vector<std::vector<int32_t>> prompts = {
      {2, 3, 4, 5, 6, 7}, Prompt(20, 1), Prompt(12, 3)};
  const std::vector<GenerateParams> params = {WithMtp(Greedy(16), 3, false),
                                              WithDraftModel(Greedy(16), 4, true),
                                              WithMtp(Sampled(16, 5), 3, false)};
  Recorder recorder(static_cast<int>(prompts.size()));
  for (size_t i = 0; i < prompts.size(); ++i) {
    EngineRequest request;
    request.prompt = prompts[i];
    request.params = params[i];
    request.on_event = recorder.Callback(static_cast<int>(i));
    EXPECT_EQ(engine.Submit(std::move(request)), i + 1) << "request ids start at 1";
  }
  recorder.WaitFinals(static_cast<int>(prompts.size()));
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Outcome o = recorder.Get(static_cast<int>(i));
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.result.tokens, RunAlone(prompts[i], params[i], kv).tokens) << "request " << i;
    EXPECT_EQ(o.result.cached_prompt_tokens, 0) << "request " << i;
  }
  engine.Shutdown(true);
  const EngineMetrics after = engine.Metrics();
  EXPECT_EQ(after.requests_started, 3);
  EXPECT_EQ(after.requests_finished, 3);
  EXPECT_EQ(after.prompt_tokens, 6 + 20 + 12);
}

}  // namespace
}  // namespace tandem
