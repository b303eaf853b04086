#include "speculative/draft_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "speculative/drafter.h"

namespace tandem {
namespace {

TEST(DraftTree, TopCandidatesAreTheLikeliestWithTheirTopTenProbabilities) {
  std::vector<float> logits(40, -5.0f);
  logits[7] = 2.0f;
  logits[3] = 1.0f;
  logits[30] = 1.0f;  // a tie with 3: the lower id first
  logits[12] = -std::numeric_limits<float>::infinity();
  const std::vector<TreeCandidate> top = TopCandidates(logits.data(), 40, 3);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].token, 7);
  EXPECT_EQ(top[1].token, 3);
  EXPECT_EQ(top[2].token, 30);
  // Among the 10 largest: e^2, e^1, e^1 and seven e^-5.
  const double sum = std::exp(2.0) + 2 * std::exp(1.0) + 7 * std::exp(-5.0);
  EXPECT_NEAR(top[0].p, std::exp(2.0) / sum, 1e-6);
  EXPECT_NEAR(top[1].p, std::exp(1.0) / sum, 1e-6);
  std::vector<float> none(8, -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(TopCandidates(none.data(), 8, 2).empty());
}

// The measure --draft-p-min compares against, against the naive reading of it: sort a copy,
// renormalise the 10 largest in descending order.
TEST(DraftTree, TopKProbabilityOfBestIsTheNaiveTopTenShare) {
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (int n_vocab : {5, 10, 300}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> logits(n_vocab);
      for (float& x : logits) x = dist(rng);
      for (int i = 0; i < n_vocab; i += 3) logits[i] = -std::numeric_limits<float>::infinity();
      std::vector<float> top = logits;
      const int k = std::min(10, n_vocab);
      std::partial_sort(top.begin(), top.begin() + k, top.end(), std::greater<float>());
      double sum = 0;
      for (int i = 0; i < k; ++i) sum += std::exp(double(top[i]) - double(top[0]));
      EXPECT_EQ(TopKProbabilityOfBest(logits.data(), n_vocab), static_cast<float>(1.0 / sum))
          << n_vocab << " tokens, trial " << trial;
    }
  }
  std::vector<float> none(8, -std::numeric_limits<float>::infinity());
  EXPECT_EQ(TopKProbabilityOfBest(none.data(), 8), 0.0f);
}

TreePlan Plan(int width, int max_extra, double price) {
  TreePlan plan;
  plan.width = width;
  plan.max_extra = max_extra;
  plan.trunk_reach = {0.9, 0.8, 0.7};
  plan.row_price.assign(max_extra, price);
  plan.calibration = 1.0;
  return plan;
}

TEST(DraftTree, TheTrunkStaysAndBranchesPayForTheirRowsBestFirstWithTheirParents) {
  const TreePlan plan = Plan(2, 3, 0.15);
  TreeBuilder tree(plan, 3);
  ASSERT_EQ(tree.Frontier().size(), 1u);
  EXPECT_EQ(tree.Frontier()[0].node, -1);
  // Step 1 from the root: trunk 10, branch 11 (worth 0.4).
  tree.AddStep({{{10, 0.6f}, {11, 0.4f}}}, true);
  ASSERT_EQ(tree.Frontier().size(), 2u);  // the trunk's tip and the branch
  EXPECT_EQ(tree.Frontier()[0].token, 10);
  EXPECT_EQ(tree.Frontier()[1].token, 11);
  EXPECT_EQ(tree.Parent(tree.Frontier()[1].node), -1);
  // Step 2: trunk 20 and branch 21 (0.9 x 0.1 = 0.09, below the price); under 11: 22 (0.4 x
  // 0.5 = 0.2) and 23 (0.4 x 0.3 = 0.12, below the price).
  tree.AddStep({{{20, 0.9f}, {21, 0.1f}}, {{22, 0.5f}, {23, 0.3f}}}, true);
  // Step 3: trunk 30 only (the trunk's tip and branch 22 are expanded; 22's children cheap).
  ASSERT_EQ(tree.Frontier().size(), 2u);
  tree.AddStep({{{30, 0.99f}}, {{40, 0.1f}}}, true);
  EXPECT_TRUE(tree.Frontier().empty());  // the trunk's length is reached

  DraftResult result;
  tree.Finish(result);
  EXPECT_EQ(result.trunk, 3);
  ASSERT_EQ(result.tokens, (std::vector<int32_t>{10, 20, 30, 11, 22}));
  EXPECT_EQ(result.tree_parent, (std::vector<int32_t>{-1, 0, 1, -1, 3}));
  EXPECT_FLOAT_EQ(result.tree_p[3], 0.4f);

  // A costlier row: only branches worth more than it (11 at 0.4, 22 at 0.36) are kept.
  const TreePlan dear = Plan(2, 3, 0.3);
  TreeBuilder pricier(dear, 2);
  pricier.AddStep({{{10, 0.6f}, {11, 0.4f}}}, true);
  pricier.AddStep({{{20, 0.9f}}, {{22, 0.9f}}}, true);
  pricier.Finish(result);
  EXPECT_EQ(result.tokens, (std::vector<int32_t>{10, 20, 11, 22}));
}

TEST(DraftTree, NoBranchWorthItsRowLeavesAChain) {
  const TreePlan plan = Plan(3, 4, 0.5);
  TreeBuilder tree(plan, 2);
  tree.AddStep({{{10, 0.7f}, {11, 0.2f}, {12, 0.1f}}}, true);
  tree.AddStep({{{20, 0.8f}, {21, 0.2f}}}, true);
  DraftResult result;
  tree.Finish(result);
  EXPECT_EQ(result.tokens, (std::vector<int32_t>{10, 20}));
  EXPECT_FALSE(result.is_tree());
}

TEST(DraftTree, AStoppedTrunkEndsItsGrowthButNotItsBranches) {
  const TreePlan plan = Plan(2, 4, 0.01);
  TreeBuilder tree(plan, 3);
  tree.AddStep({{{10, 0.5f}, {11, 0.5f}}}, false);  // the stop rule ends the trunk at the root
  ASSERT_EQ(tree.Frontier().size(), 2u);            // both are branches now
  DraftResult result;
  tree.AddStep({{{20, 1.0f}}, {{21, 1.0f}}}, true);
  tree.Finish(result);
  EXPECT_EQ(result.trunk, 0);
  EXPECT_EQ(result.tree_parent.size(), result.tokens.size());
}

TEST(DraftTree, CalibrationFollowsTheTakenShare) {
  TreeCalibration c;
  EXPECT_DOUBLE_EQ(c.Factor(), 0.5);
  for (int i = 0; i < 400; ++i) c.Record(0.5f, i % 4 == 0);  // taken a quarter of the time
  EXPECT_NEAR(c.Factor(), 0.5, 0.05);                        // 0.25 / 0.5
  for (int i = 0; i < 400; ++i) c.Record(0.5f, false);
  EXPECT_LT(c.Factor(), 0.05);
}

}  // namespace
}  // namespace tandem
