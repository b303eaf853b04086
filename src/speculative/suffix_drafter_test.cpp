// SuffixDrafter: what a finished request teaches it is proposed to the same tenant's later
// requests and to no other's, and its drafts are the planner's proposal (point masses), as
// prompt lookup's are.
#include "speculative/suffix_drafter.h"

#include <gtest/gtest.h>

#include "kv/kv_cache.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace tandem {
namespace {

TEST(SuffixDrafter, ProposesWhatTheSameTenantsEarlierRequestsSaid) {
  SuffixDrafter drafter(std::make_shared<SuffixIndex>(size_t{1} << 20), nullptr);
  const std::vector<int32_t> request = {5, 6, 7, 8, 9, 10, 11, 12, 13};
  int match = -1;
  EXPECT_TRUE(drafter.ProposeFromPast("a", std::vector<int32_t>{1, 6, 7, 8, 9}, 8, &match).empty());
  EXPECT_EQ(match, 0);
  drafter.LearnRequest("a", request);
  EXPECT_EQ(drafter.ProposeFromPast("a", std::vector<int32_t>{1, 6, 7, 8, 9}, 3, &match),
            (std::vector<int32_t>{10, 11, 12}));
  EXPECT_EQ(match, 4);
  EXPECT_TRUE(drafter.ProposeFromPast("b", std::vector<int32_t>{1, 6, 7, 8, 9}, 3, &match).empty());
  EXPECT_EQ(drafter.index()->stats().documents, 1u);
}

TEST(SuffixDrafter, DraftsTheProposalAsPointMasses) {
  SuffixDrafter drafter(std::make_shared<SuffixIndex>(size_t{1} << 20), nullptr);
  EXPECT_EQ(drafter.BytesPerStep(), 0.0);
  const std::vector<int32_t> history = {1, 2, 3};
  const std::vector<int32_t> proposal = {10, 11, 12, 13};
  DraftRequest r;
  r.last = 3;
  r.history = history;
  r.lookup = proposal;
  r.n_max = 3;
  Sampler sampler(SamplingParams{});
  Rng rng(1);
  r.sampler = &sampler;
  r.rng = &rng;
  DraftResult result;
  const KvCache no_cache({}, KvCacheOptions{});  // not read without a model
  // No model: the proposal up to n_max, no drafter step; sampled requests get empty q (a point
  // mass) per token.
  drafter.Draft(r, no_cache, result);
  EXPECT_EQ(result.tokens, (std::vector<int32_t>{10, 11, 12}));
  EXPECT_EQ(result.n_lookup, 3);
  EXPECT_EQ(result.steps, 0);
  ASSERT_EQ(result.q.size(), 3u);
  for (const auto& q : result.q) EXPECT_TRUE(q.empty());
  r.n_min = 4;  // fewer than draft_min: none
  drafter.Draft(r, no_cache, result);
  EXPECT_TRUE(result.tokens.empty());
  EXPECT_EQ(result.n_lookup, 0);
}

}  // namespace
}  // namespace tandem
