#include "grammar/token_vocabulary.h"

#include <algorithm>

#include "base/error.h"
#include "tokenizer/tokenizer.h"

namespace tandem {

std::vector<int32_t> TokenBitmask::Ids() const {
  std::vector<int32_t> ids;
  for (size_t w = 0; w < words_.size(); ++w) {
    for (uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
      ids.push_back(static_cast<int32_t>(w * 64 + static_cast<size_t>(std::countr_zero(bits))));
    }
  }
  return ids;
}

namespace {

using Item = std::pair<std::string_view, int32_t>;

// Builds the subtree of the prefix of length `depth` shared by items[begin, end) into
// trie.nodes[index] (already allocated).
void BuildNode(TokenTrie& trie, const std::vector<Item>& items, uint32_t index, uint32_t begin,
               uint32_t end, size_t depth) {
  uint32_t i = begin;
  while (i < end && items[i].first.size() == depth) ++i;
  std::vector<std::pair<uint32_t, uint32_t>> groups;
  while (i < end) {
    const char b = items[i].first[depth];
    uint32_t j = i + 1;
    while (j < end && items[j].first[depth] == b) ++j;
    groups.push_back({i, j});
    i = j;
  }
  const uint32_t first = static_cast<uint32_t>(trie.nodes.size());
  trie.nodes[index].n_end = (groups.empty() ? end : groups[0].first) - begin;
  trie.nodes[index].first_child = first;
  trie.nodes[index].n_children = static_cast<uint32_t>(groups.size());
  for (const auto& [gb, ge] : groups) {
    trie.nodes.push_back({gb, ge, 0, 0, 0, static_cast<uint8_t>(items[gb].first[depth])});
  }
  for (uint32_t c = 0; c < groups.size(); ++c) {
    BuildNode(trie, items, first + c, groups[c].first, groups[c].second, depth + 1);
  }
}

// User-defined tokens that stand for markup or nothing rather than their text: Gemma's `<|...|>`
// chat markup, `<unusedN>`, `<mask>`, `[multimodal]`.
bool IsPlaceholder(const std::string& text) {
  if (text.starts_with("<|") || text.ends_with("|>")) return true;
  if (text == "<mask>" || text == "[multimodal]") return true;
  if (text.starts_with("<unused") && text.ends_with(">") && text.size() > 8) {
    return text.find_first_not_of("0123456789", 7) == text.size() - 1;
  }
  return false;
}

}  // namespace

TokenTrie TokenTrie::Build(std::vector<std::pair<std::string_view, int32_t>> items) {
  std::sort(items.begin(), items.end());
  TokenTrie trie;
  trie.nodes.push_back({0, static_cast<uint32_t>(items.size()), 0, 0, 0, 0});
  BuildNode(trie, items, 0, 0, static_cast<uint32_t>(items.size()), 0);
  trie.sorted.reserve(items.size());
  for (const Item& item : items) trie.sorted.push_back(item.second);
  return trie;
}

TokenVocabulary::TokenVocabulary(std::vector<std::string> pieces, std::vector<uint8_t> matchable,
                                 std::vector<int32_t> stop_ids)
    : pieces_(std::move(pieces)), matchable_(std::move(matchable)), stop_ids_(std::move(stop_ids)) {
  if (matchable_.size() != pieces_.size()) {
    Fail(ErrorKind::kInvalidArgument, "token vocabulary: matchable flags do not match the pieces");
  }
  std::sort(stop_ids_.begin(), stop_ids_.end());
  for (const int32_t id : stop_ids_) {
    if (id < 0 || id >= size()) {
      Fail(ErrorKind::kInvalidArgument,
           "token vocabulary: stop id " + std::to_string(id) + " is out of range");
    }
  }
  std::vector<std::pair<std::string_view, int32_t>> items;
  for (int32_t id = 0; id < size(); ++id) {
    if (matchable_[id] && !pieces_[id].empty() && !IsStop(id)) items.push_back({pieces_[id], id});
  }
  trie_ = TokenTrie::Build(std::move(items));
}

bool TokenVocabulary::IsStop(int32_t id) const {
  return std::binary_search(stop_ids_.begin(), stop_ids_.end(), id);
}

std::shared_ptr<const TokenVocabulary> TokenVocabulary::FromTokenizer(
    const Tokenizer& tokenizer, std::span<const std::string_view> markup) {
  const Vocab& vocab = tokenizer.vocab();
  std::vector<std::string> pieces(vocab.size());
  std::vector<uint8_t> matchable(vocab.size(), 0);
  for (int32_t id = 0; id < tokenizer.n_tokens(); ++id) {
    pieces[id] = tokenizer.TokenToPiece(id);
    const std::string& text = vocab.tokens[id];
    switch (vocab.types[id]) {
      case TokenType::kNormal:
      case TokenType::kUndefined:
      case TokenType::kByte:
        matchable[id] = 1;
        break;
      case TokenType::kUserDefined:
        matchable[id] =
            !IsPlaceholder(text) || std::find(markup.begin(), markup.end(), text) != markup.end();
        break;
      default:
        break;
    }
  }
  return std::make_shared<const TokenVocabulary>(std::move(pieces), std::move(matchable),
                                                 tokenizer.eog_ids());
}

}  // namespace tandem
