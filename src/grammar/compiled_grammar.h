// A grammar compiled against a vocabulary: per byte-set position, the tokens accepted or rejected
// whatever the stack below (precomputed), and the few whose fate depends on it (checked per mask).
//
// The precomputation walks the token trie from the single stack (unknown, pos). When a frame with
// an unknown parent ends, its rule's return position is used if the grammar has only one (helper
// rules for repetitions and character classes are called from one place); otherwise the token is
// context-dependent from that byte on, and the rest of its bytes are checked at mask time against
// the real stack (XGrammar's adaptive token mask cache, with static return positions instead of
// rule inlining).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/pushdown.h"
#include "grammar/token_vocabulary.h"

namespace tandem {

class CompiledGrammar {
 public:
  // Precomputes the token tables (the slow part: a trie walk per byte-set position).
  CompiledGrammar(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocab);
  CompiledGrammar(const CompiledGrammar&) = delete;
  CompiledGrammar& operator=(const CompiledGrammar&) = delete;

  const Grammar& grammar() const { return grammar_; }
  const TokenVocabulary& vocab() const { return *vocab_; }
  // Stacks live here; matchers of this grammar share it (one thread at a time).
  Pushdown& pushdown() { return *pushdown_; }

  // The tokens state `state` (a Pushdown state id) allows next: matchable tokens whose bytes it
  // can consume, plus the stop tokens if it is complete. Masks are memoized per state.
  void FillMask(int32_t state, TokenBitmask& mask);

  // The tokenizer's encoding of text, used to draft a forced string (jump-forward) the way the
  // model would write it. Optional; whoever sets it keeps the tokenizer alive as long as this.
  using Encoder = std::function<std::vector<int32_t>(std::string_view)>;
  void SetEncoder(Encoder encoder) { encoder_ = std::move(encoder); }
  const Encoder& encoder() const { return encoder_; }

  struct Stats {
    size_t positions = 0;          // byte-set positions with a table
    size_t accepted = 0;           // context-independent accepted entries, all positions
    size_t context_dependent = 0;  // context-dependent subtrees, all positions
  };
  const Stats& stats() const { return stats_; }

 private:
  // Tokens below `trie_node` (of the vocabulary trie) whose walk left the known frames at the
  // unknown frame `depth` right after the node's bytes: the rest of their bytes are matched
  // against the real stack at mask time.
  struct Dependent {
    uint32_t trie_node;
    int32_t depth;
  };
  struct PositionTable {
    std::vector<int32_t> accepted;  // token ids accepted whatever the context (if sparse)
    std::unique_ptr<TokenBitmask> accepted_bits;  // ... as bits (if dense)
    std::vector<Dependent> dependent;
  };

  void BuildTable(int32_t pos);
  void Walk(uint32_t trie_node, size_t level, PositionTable& table, std::vector<int32_t>& accepted);
  void WalkSuffixes(uint32_t trie_node, size_t level, TokenBitmask& mask);
  void ComputeMask(int32_t state, TokenBitmask& mask);

  Grammar grammar_;
  std::shared_ptr<const TokenVocabulary> vocab_;
  std::unique_ptr<Pushdown> pushdown_;
  std::vector<PositionTable> tables_;    // [element position] (empty for non byte-set positions)
  std::vector<int32_t> levels_;          // scratch: state per trie level / suffix byte
  std::unordered_set<uint64_t> walked_;  // scratch: (resumed state, trie node) walked this mask
  std::unordered_map<int32_t, TokenBitmask> memo_;  // state -> mask (cleared when full)
  Stats stats_;
  Encoder encoder_;
};

}  // namespace tandem
