// Finds special and user-defined token texts in raw input, leftmost-longest like HF added tokens.
#include "tokenizer/special_token_matcher.h"

namespace tandem {

SpecialTokenMatcher::SpecialTokenMatcher() : nodes_(1) {}

uint32_t SpecialTokenMatcher::Child(uint32_t node, uint8_t byte) const {
  if (node == 0) return root_children_[byte];
  const auto it = edges_.find(EdgeKey(node, byte));
  return it == edges_.end() ? 0 : it->second;
}

void SpecialTokenMatcher::Add(std::string_view text, int32_t id, bool always) {
  if (text.empty()) return;
  uint32_t node = 0;
  for (const char c : text) {
    const auto byte = static_cast<uint8_t>(c);
    uint32_t child = Child(node, byte);
    if (child == 0) {
      child = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
      if (node == 0) {
        root_children_[byte] = child;
      } else {
        edges_.emplace(EdgeKey(node, byte), child);
      }
    }
    node = child;
  }
  if (nodes_[node].id < 0) ++n_texts_;
  nodes_[node].id = id;
  nodes_[node].always = always;
}

std::optional<SpecialTokenMatcher::Match> SpecialTokenMatcher::MatchAt(std::string_view text,
                                                                       size_t pos,
                                                                       bool parse_special) const {
  std::optional<Match> best;
  uint32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    node = Child(node, static_cast<uint8_t>(text[i]));
    if (node == 0) break;
    const Node& n = nodes_[node];
    if (n.id >= 0 && (n.always || parse_special)) best = Match{n.id, i + 1 - pos};
  }
  return best;
}

}  // namespace tandem
