// Finds special and user-defined token texts in raw input, leftmost-longest like HF added tokens.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tandem {

// A byte trie over the texts of the tokens that are matched whole before BPE. Each text is either
// always matched (user-defined tokens) or only when the caller parses specials (control/unknown).
class SpecialTokenMatcher {
 public:
  struct Match {
    int32_t id;
    size_t length;  // bytes of input the token covers
  };

  SpecialTokenMatcher();

  // Registers `text` (non-empty) for token `id`. A text added twice keeps the later id.
  void Add(std::string_view text, int32_t id, bool always);

  // The longest registered text that starts at text[pos] and is allowed (always, or parse_special),
  // or nullopt. Requires pos < text.size().
  std::optional<Match> MatchAt(std::string_view text, size_t pos, bool parse_special) const;

  size_t size() const { return n_texts_; }

 private:
  struct Node {
    int32_t id = -1;      // token ending here, or -1
    bool always = false;  // that token is matched without parse_special
  };
  static uint64_t EdgeKey(uint32_t node, uint8_t byte) { return (uint64_t{node} << 8) | byte; }
  uint32_t Child(uint32_t node, uint8_t byte) const;  // 0 = none (the root is never a child)

  std::vector<Node> nodes_;                       // [0] is the root
  std::array<uint32_t, 256> root_children_{};     // first step without hashing; 0 = none
  std::unordered_map<uint64_t, uint32_t> edges_;  // EdgeKey(node, byte) -> child, below the root
  size_t n_texts_ = 0;
};

}  // namespace tandem
