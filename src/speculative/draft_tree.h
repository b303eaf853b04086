// Draft trees (docs/mtp.md § Draft trees): where the drafter is unsure, a round drafts the top
// few tokens instead of one, and the target verifies every branch in one forward
// (ForwardBatch::tree_parent_offset). This file holds what a tree is made of and how its shape
// is chosen: the plan the round hands the drafter (TreePlan), the growth of one request's tree
// step by step (TreeBuilder), and the measured link between the drafter's probability of a
// branch and its acceptance (TreeCalibration).
//
// Shape. The chain the planner chose (its length from measured per-position acceptance and
// costs, as for a linear draft) is the tree's trunk. Every other candidate, the drafter's top
// `width` tokens at each node it expands, is worth its estimated acceptance: the probability that
// its parent is accepted (the planner's for a trunk node, else the parent's worth) times the
// calibrated probability that the target picks it there. A branch is kept while its worth pays
// for its verify row (TreePlan::row_price: the measured verify-cost curve at the round's rate of
// tokens per unit time), best first, never without its parent. The best `width - 1` branches of
// each depth are expanded at the next drafter step, beside the trunk's row.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tandem {

struct DraftResult;

// The most branch nodes (verify rows beyond the trunk) a tree holds.
inline constexpr int kMaxTreeBranches = 16;
// The most children a node branches to (--draft-tree).
inline constexpr int kMaxTreeWidth = 4;

struct TreePlan {
  int width = 0;      // children per expanded node; < 2: no tree (a chain)
  int max_extra = 0;  // most branch nodes
  // [i]: the estimated probability that trunk node i is accepted (all of 0..i accepted).
  std::vector<double> trunk_reach;
  // [e]: the expected tokens the e-th branch node's verify row must bring to pay for itself.
  std::vector<double> row_price;
  double calibration = 1.0;  // TreeCalibration::Factor

  bool on() const { return width >= 2 && max_extra > 0; }
};

// A candidate token at a node: the drafter's probability of it among its top 10 (renormalised,
// the measure of --draft-p-min).
struct TreeCandidate {
  int32_t token = 0;
  float p = 0.0f;
};
// The k most probable tokens of `logits` (ties: the lower id first), their probabilities
// renormalised among the `among` most probable. The first is the argmax; none when every logit
// is -inf.
std::vector<TreeCandidate> TopCandidates(const float* logits, int n_vocab, int k, int among = 10);

// One request's tree as it grows, step by step of its drafter.
class TreeBuilder {
 public:
  // `n_trunk`: the trunk's length (the planned drafts).
  TreeBuilder(const TreePlan& plan, int n_trunk);

  // One expanded node of the next step: the node (-1: the root, the committed token) whose
  // children the step drafts, and its token.
  struct Expand {
    int node = -1;
    int32_t token = 0;
  };
  // The nodes the next step expands (the trunk's tip first); empty when the tree is done.
  const std::vector<Expand>& Frontier() const { return frontier_; }
  // A node's parent (-1: the root).
  int Parent(int node) const { return nodes_.at(node).parent; }
  // The step's candidates for each frontier node, in Frontier's order. `trunk_goes_on`: false
  // when the trunk's tip must not be extended (the drafter's stop rule, e.g. --draft-p-min).
  void AddStep(const std::vector<std::vector<TreeCandidate>>& candidates, bool trunk_goes_on);
  // The tree: tokens (trunk first, then the kept branches, each after its parent), parents and
  // the drafter's probabilities, into result (tokens, tree_parent, tree_p, trunk).
  void Finish(DraftResult& result) const;

 private:
  struct Node {
    int32_t token = 0;
    int parent = -1;  // node index; -1: the root
    float p = 0.0f;
    double worth = 0.0;  // estimated probability of acceptance
    bool trunk = false;
  };
  const TreePlan& plan_;
  int n_trunk_;
  int trunk_tip_ = -1;  // the trunk's last node (-1: the root)
  int trunk_len_ = 0;
  int depth_ = 0;  // steps taken
  std::vector<Node> nodes_;
  std::vector<Expand> frontier_;
};

// The measured link between the drafter's probability of a branch and its acceptance by the
// target, over the branches verification reached (their parent was accepted): acceptance
// ≈ min(1, Factor() · p). Decayed, from a prior of one half.
class TreeCalibration {
 public:
  void Record(float p, bool accepted);
  double Factor() const { return (accepted_ + kPrior) / (p_sum_ + 2.0 * kPrior); }

 private:
  static constexpr double kPrior = 1.0, kDecay = 0.98;
  double accepted_ = 0.0, p_sum_ = 0.0;
};

}  // namespace tandem
