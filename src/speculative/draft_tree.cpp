#include "speculative/draft_tree.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "sampling/sampling_stages.h"
#include "speculative/drafter.h"

namespace tandem {

std::vector<TreeCandidate> TopCandidates(const float* logits, int n_vocab, int k, int among) {
  // The sampler's one-pass k-heap: the `among` best in its order (larger logit, then lower id),
  // -inf left out.
  sampling::CandidateList top;
  sampling::SelectTopK(std::span<const float>(logits, n_vocab), among, top);
  std::sort(top.items.begin(), top.items.end(), sampling::Before);  // sorted unless among >= V
  std::vector<TreeCandidate> out;
  if (top.items.empty()) return out;  // nothing allowed
  const double best = top.items[0].logit;
  double sum = 0;
  for (const sampling::Candidate& c : top.items) sum += std::exp(double(c.logit) - best);
  for (int i = 0; i < std::min<int>(k, top.items.size()); ++i) {
    const double p = std::exp(double(top.items[i].logit) - best) / sum;
    if (p <= 0) break;
    out.push_back(TreeCandidate{top.items[i].id, static_cast<float>(p)});
  }
  return out;
}

TreeBuilder::TreeBuilder(const TreePlan& plan, int n_trunk) : plan_(plan), n_trunk_(n_trunk) {
  if (n_trunk_ > 0) frontier_.push_back(Expand{-1, 0});
}

void TreeBuilder::AddStep(const std::vector<std::vector<TreeCandidate>>& candidates,
                          bool trunk_goes_on) {
  ++depth_;
  std::vector<int> branches;  // created in this step
  bool trunk_grew = false;
  for (size_t i = 0; i < frontier_.size() && i < candidates.size(); ++i) {
    const int parent = frontier_[i].node;
    const double parent_worth = parent < 0 ? 1.0 : nodes_[parent].worth;
    const bool at_tip = parent == trunk_tip_;
    for (size_t c = 0; c < candidates[i].size(); ++c) {
      const TreeCandidate& cand = candidates[i][c];
      Node node{cand.token, parent, cand.p, 0.0, false};
      if (at_tip && c == 0 && trunk_goes_on && trunk_len_ < n_trunk_) {
        node.trunk = true;
        node.worth = plan_.trunk_reach.at(trunk_len_);
        nodes_.push_back(node);
        trunk_tip_ = static_cast<int>(nodes_.size()) - 1;
        ++trunk_len_;
        trunk_grew = true;
        continue;
      }
      node.worth = parent_worth * std::min(1.0, plan_.calibration * cand.p);
      nodes_.push_back(node);
      branches.push_back(static_cast<int>(nodes_.size()) - 1);
    }
  }
  // The next step: the trunk's tip while the trunk grows, and this step's best branches that
  // could still have a child worth a row.
  frontier_.clear();
  if (depth_ >= n_trunk_) return;
  if (trunk_grew && trunk_len_ < n_trunk_) {
    frontier_.push_back(Expand{trunk_tip_, nodes_[trunk_tip_].token});
  }
  std::stable_sort(branches.begin(), branches.end(),
                   [&](int a, int b) { return nodes_[a].worth > nodes_[b].worth; });
  const double cheapest = plan_.row_price.empty() ? 0.0 : plan_.row_price.front();
  for (int b : branches) {
    if (static_cast<int>(frontier_.size()) >= plan_.width) break;
    if (nodes_[b].worth * plan_.calibration < cheapest) break;
    frontier_.push_back(Expand{b, nodes_[b].token});
  }
}

void TreeBuilder::Finish(DraftResult& result) const {
  const int n = static_cast<int>(nodes_.size());
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (!nodes_[i].trunk) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return nodes_[a].worth > nodes_[b].worth; });
  std::vector<bool> kept(n, false);
  for (int i = 0; i < n; ++i) kept[i] = nodes_[i].trunk;
  int extra = 0;
  for (int b : order) {
    if (extra >= plan_.max_extra || extra >= static_cast<int>(plan_.row_price.size())) break;
    if (nodes_[b].worth < plan_.row_price[extra]) break;
    const int parent = nodes_[b].parent;
    if (parent >= 0 && !kept[parent]) continue;
    kept[b] = true;
    ++extra;
  }
  result.tokens.clear();
  result.tree_parent.clear();
  result.tree_p.clear();
  result.trunk = 0;
  std::vector<int> index(n, -1);          // new index of each kept node
  for (int pass = 0; pass < 2; ++pass) {  // the trunk first, then the branches in creation order
    for (int i = 0; i < n; ++i) {
      if (!kept[i] || nodes_[i].trunk != (pass == 0)) continue;
      index[i] = static_cast<int>(result.tokens.size());
      result.tokens.push_back(nodes_[i].token);
      result.tree_parent.push_back(nodes_[i].parent < 0 ? -1 : index[nodes_[i].parent]);
      result.tree_p.push_back(nodes_[i].p);
      if (pass == 0) ++result.trunk;
    }
  }
  if (extra == 0) {  // a chain
    result.tree_parent.clear();
    result.tree_p.clear();
  }
}

void TreeCalibration::Record(float p, bool accepted) {
  accepted_ = accepted_ * kDecay + (accepted ? 1.0 : 0.0);
  p_sum_ = p_sum_ * kDecay + p;
}

}  // namespace tandem
