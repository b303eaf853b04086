// The MTP drafter's batch (Drafter::DraftBatch): jobs drafted together give what each gives
// alone, and a job at fault fails alone, its neighbours drafting on (chains and draft trees).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "spec_grammar_pair.h"
#include "speculative/mtp_drafter.h"

namespace tandem {
namespace {

// Up to three drafts after a 10-token prompt held in sequence `seq` of `cache`, from token 5; a
// tree of width 2 whose every branch pays (all trunk nodes reached, rows free) when `tree`.
DraftRequest AfterPrompt(const std::vector<int32_t>& prompt, const ForwardOutput& out, int seq,
                         bool tree) {
  DraftRequest r;
  r.last = 5;
  r.pos = static_cast<int32_t>(prompt.size());
  r.seq = seq;
  r.hidden = out.Hidden(static_cast<int>(prompt.size()) - 1);
  r.history = prompt;
  r.n_max = 3;
  if (tree) {
    r.tree.width = 2;
    r.tree.max_extra = 4;
    r.tree.trunk_reach.assign(3, 1.0);
    r.tree.row_price.assign(4, 0.0);
  }
  return r;
}

TEST(MtpDrafterBatch, AJobAtFaultFailsAloneAndTheOthersDraftAsAlone) {
  Pair pair = MakePair("mtp_batch");
  ThreadPool pool(2);
  auto cache = pair.target->NewKvCache({.type = TensorType::kF32, .n_ctx = 64, .n_seq = 3});
  std::vector<int32_t> prompt;
  for (int i = 0; i < 10; ++i) prompt.push_back(2 + (i * 29) % 500);
  ForwardBatch batch;
  for (int seq = 0; seq < 3; ++seq) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      batch.Add(prompt[i], static_cast<int>(i), seq, seq == 0);
    }
  }
  ForwardOutput out;
  pair.target->Forward(batch, *cache, out, pool);
  MtpDrafter drafter(*pair.assistant, pool);
  for (const bool tree : {false, true}) {
    SCOPED_TRACE(tree ? "trees" : "chains");
    const DraftRequest good = AfterPrompt(prompt, out, 0, tree);
    DraftResult alone;
    DraftAlone(drafter, good, *cache, alone);
    ASSERT_EQ(alone.tokens.size(), tree ? 7u : 3u);  // a tree: 3 trunk + 4 branches
    // Between two good jobs, one whose position lies past its sequence's cache.
    DraftRequest bad = AfterPrompt(prompt, out, 1, tree);
    bad.pos = 40;
    DraftRequest other = good;
    other.seq = 2;
    std::vector<DraftJob> jobs = {{good, {}, 0, {}}, {bad, {}, 0, {}}, {other, {}, 0, {}}};
    drafter.DraftBatch(jobs, *cache);
    EXPECT_NE(jobs[1].error.find("past the target cache"), std::string::npos) << jobs[1].error;
    EXPECT_TRUE(jobs[1].result.tokens.empty());
    EXPECT_EQ(jobs[1].result.steps, 0);
    // The good jobs' later steps ran in batches of their own or beside the other: an assistant
    // row's result does not depend on the rows beside it (Gemma4Assistant::Step).
    for (const size_t j : {0u, 2u}) {
      EXPECT_EQ(jobs[j].error, "");
      EXPECT_EQ(jobs[j].result.tokens, alone.tokens) << "job " << j;
      EXPECT_EQ(jobs[j].result.tree_parent, alone.tree_parent) << "job " << j;
    }
  }
}

}  // namespace
}  // namespace tandem
