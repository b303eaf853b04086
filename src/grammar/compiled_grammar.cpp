#include "grammar/compiled_grammar.h"

#include <algorithm>

namespace tandem {
namespace {

constexpr size_t kMaxMemoizedMasks = 512;  // 32 KiB each on a 262k vocabulary

}  // namespace

CompiledGrammar::CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocab)
    : grammar_(std::move(grammar)),
      vocab_(std::move(vocab)),
      pushdown_(std::make_unique<Pushdown>(grammar_)) {
  size_t max_len = 0;
  for (int32_t id = 0; id < vocab_->size(); ++id) {
    max_len = std::max(max_len, vocab_->piece(id).size());
  }
  levels_.resize(max_len + 2);
  tables_.resize(grammar_.elements.size());
  for (size_t pos = 0; pos < grammar_.elements.size(); ++pos) {
    if (grammar_.elements[pos].kind == GrammarElement::kBytes) {
      BuildTable(static_cast<int32_t>(pos));
    }
  }
}

void CompiledGrammar::Walk(uint32_t trie_node, size_t level, PositionTable& table,
                           std::vector<int32_t>& accepted) {
  const TokenTrie& trie = vocab_->trie();
  const TokenTrie::Node node = trie.nodes[trie_node];
  Pushdown& pd = *pushdown_;
  for (uint32_t c = node.first_child; c < node.first_child + node.n_children; ++c) {
    const TokenTrie::Node& child = trie.nodes[c];
    const Pushdown::Transition t = pd.Next(levels_[level], child.byte);
    levels_[level + 1] = t.next;
    if (t.escapes >= 0 && child.n_children > 0) {
      for (const int32_t depth : pd.escapes(t.escapes)) table.dependent.push_back({c, depth});
    }
    const bool alive = !pd.state(t.next).tops.empty();
    if (alive || pd.state(t.next).accept || t.escapes >= 0) {
      for (uint32_t i = child.begin; i < child.begin + child.n_end; ++i) {
        accepted.push_back(trie.sorted[i]);
      }
    }
    if (alive) Walk(c, level + 1, table, accepted);
  }
}

void CompiledGrammar::BuildTable(int32_t pos) {
  PositionTable& table = tables_[pos];
  Pushdown& pd = *pushdown_;
  StackSet start;
  start.tops = {pd.Intern(UnknownNode(0), pos)};
  levels_[0] = pd.InternState(start);
  std::vector<int32_t> accepted;
  Walk(0, 0, table, accepted);
  std::sort(accepted.begin(), accepted.end());
  stats_.positions++;
  stats_.accepted += accepted.size();
  std::sort(table.dependent.begin(), table.dependent.end(),
            [](const Dependent& a, const Dependent& b) {
              return a.depth < b.depth || (a.depth == b.depth && a.trie_node < b.trie_node);
            });
  stats_.context_dependent += table.dependent.size();
  if (accepted.size() * 32 > static_cast<size_t>(vocab_->size())) {
    table.accepted_bits = std::make_unique<TokenBitmask>(vocab_->size());
    for (const int32_t id : accepted) table.accepted_bits->Set(id);
  } else {
    table.accepted = std::move(accepted);
  }
}

void CompiledGrammar::WalkSuffixes(uint32_t trie_node, size_t level, TokenBitmask& mask) {
  const TokenTrie& trie = vocab_->trie();
  const TokenTrie::Node node = trie.nodes[trie_node];
  Pushdown& pd = *pushdown_;
  for (uint32_t c = node.first_child; c < node.first_child + node.n_children; ++c) {
    const TokenTrie::Node& child = trie.nodes[c];
    const int32_t next = pd.Next(levels_[level], child.byte).next;
    if (next == Pushdown::kDeadState) continue;
    for (uint32_t i = child.begin; i < child.begin + child.n_end; ++i) mask.Set(trie.sorted[i]);
    if (!pd.state(next).tops.empty()) {
      levels_[level + 1] = next;
      WalkSuffixes(c, level + 1, mask);
    }
  }
}

void CompiledGrammar::FillMask(int32_t state, TokenBitmask& mask) {
  if (const auto it = memo_.find(state); it != memo_.end()) {
    mask = it->second;
    return;
  }
  ComputeMask(state, mask);
  if (memo_.size() >= kMaxMemoizedMasks) memo_.clear();
  memo_.emplace(state, mask);
}

void CompiledGrammar::ComputeMask(int32_t state_id, TokenBitmask& mask) {
  mask.Clear();
  walked_.clear();
  Pushdown& pd = *pushdown_;
  const StackSet state = pd.state(state_id);
  for (const int32_t top : state.tops) {
    const PositionTable& table = tables_[pd.node(top).pos];
    if (table.accepted_bits) {
      mask.Or(*table.accepted_bits);
    } else {
      for (const int32_t id : table.accepted) mask.Set(id);
    }
    int32_t resumed_depth = -1, resumed = Pushdown::kDeadState;
    for (const Dependent& dep : table.dependent) {
      if (dep.depth != resumed_depth) {
        // The real frame the unknown one at `depth` stood for, and the stacks after it resumes.
        resumed_depth = dep.depth;
        resumed = Pushdown::kDeadState;
        int32_t frame = pd.node(top).parent;
        int32_t d = 0;
        for (; d < dep.depth && frame >= 0; ++d) frame = pd.node(frame).parent;
        if (d < dep.depth) continue;  // cannot happen for a well-formed stack
        StackSet set;
        pd.Begin(set);
        pd.PopInto(frame, -1, set, nullptr);
        pd.End(set);
        if (!set.tops.empty()) resumed = pd.InternState(set);
      }
      if (resumed == Pushdown::kDeadState) continue;
      if (!walked_.insert((static_cast<uint64_t>(resumed) << 32) | dep.trie_node).second) continue;
      levels_[0] = resumed;
      WalkSuffixes(dep.trie_node, 0, mask);
    }
  }
  if (state.accept) {
    for (const int32_t id : vocab_->stop_ids()) mask.Set(id);
  }
}

}  // namespace tandem
