// The token side of constrained decoding: each token's bytes, which tokens a grammar may produce,
// a byte trie over them, and a bitmask over token ids.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

class Tokenizer;

// A set of token ids as bits (bit i of words[i / 64]).
class TokenBitmask {
 public:
  explicit TokenBitmask(int32_t n = 0) : n_(n), words_((static_cast<size_t>(n) + 63) / 64, 0) {}
  int32_t size() const { return n_; }
  void Clear() { std::fill(words_.begin(), words_.end(), 0); }
  void Set(int32_t id) { words_[id >> 6] |= uint64_t{1} << (id & 63); }
  bool Test(int32_t id) const { return (words_[id >> 6] >> (id & 63)) & 1; }
  void Or(const TokenBitmask& other) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
  }
  int32_t Count() const {
    int32_t c = 0;
    for (const uint64_t w : words_) c += std::popcount(w);
    return c;
  }
  std::vector<int32_t> Ids() const;
  const std::vector<uint64_t>& words() const { return words_; }
  bool operator==(const TokenBitmask&) const = default;

 private:
  int32_t n_;
  std::vector<uint64_t> words_;
};

// A byte trie over the matchable tokens: nodes in DFS order, children of a node contiguous.
// Tokens are sorted by their bytes, so a node's subtree is a contiguous range of `sorted`.
struct TokenTrie {
  struct Node {
    uint32_t begin, end;   // range of `sorted` whose bytes start with this node's prefix
    uint32_t n_end;        // the first n_end of them are exactly the prefix
    uint32_t first_child;  // index in `nodes`
    uint32_t n_children;
    uint8_t byte;  // the edge into this node
  };
  std::vector<Node> nodes;      // nodes[0] is the root (empty prefix)
  std::vector<int32_t> sorted;  // token ids sorted by bytes

  // The trie of (bytes, token id) items; bytes must outlive the call only.
  static TokenTrie Build(std::vector<std::pair<std::string_view, int32_t>> items);
};

// The vocabulary as a grammar sees it. Immutable once built; shared by every compiled grammar.
class TokenVocabulary {
 public:
  // `pieces[i]` is the bytes token i stands for; `matchable[i]` whether a grammar may produce it
  // by its bytes; `stop_ids` end generation and are allowed exactly when the grammar is complete.
  TokenVocabulary(std::vector<std::string> pieces, std::vector<uint8_t> matchable,
                  std::vector<int32_t> stop_ids);
  // Normal and byte tokens, and user-defined tokens other than markup and placeholders (`<|...|>`,
  // `<unusedN>`, `<mask>`, `[multimodal]`), are matchable; control, unknown and unused tokens are
  // not. `markup`: texts of markup tokens made matchable too, by their text (a tool-call grammar
  // writes `<|tool_call>` and `<|"|>`). Stop ids: the tokenizer's EOG set.
  static std::shared_ptr<const TokenVocabulary> FromTokenizer(
      const Tokenizer& tokenizer, std::span<const std::string_view> markup = {});

  int32_t size() const { return static_cast<int32_t>(pieces_.size()); }
  const std::string& piece(int32_t id) const { return pieces_[id]; }
  bool matchable(int32_t id) const { return matchable_[id] != 0; }
  const std::vector<int32_t>& stop_ids() const { return stop_ids_; }
  bool IsStop(int32_t id) const;
  const TokenTrie& trie() const { return trie_; }

 private:
  std::vector<std::string> pieces_;
  std::vector<uint8_t> matchable_;
  std::vector<int32_t> stop_ids_;  // sorted
  TokenTrie trie_;
};

}  // namespace tandem
