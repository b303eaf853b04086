// A context-free grammar over bytes, flattened for the pushdown matcher: every rule is a list of
// alternatives, every alternative a sequence of byte sets and rule references ended by kEnd.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tandem {

// A set of byte values (256 bits).
struct ByteSet {
  std::array<uint64_t, 4> bits{};
  void Add(uint8_t b) { bits[b >> 6] |= uint64_t{1} << (b & 63); }
  void AddRange(uint8_t lo, uint8_t hi) {
    for (int b = lo; b <= hi; ++b) Add(static_cast<uint8_t>(b));
  }
  bool Has(uint8_t b) const { return (bits[b >> 6] >> (b & 63)) & 1; }
  int Count() const;
  bool operator==(const ByteSet&) const = default;
};

// One element of an alternative. kBytes: matches one byte of bytesets[value]. kRule: expands rule
// `value`. kEnd: ends an alternative of rule `value`.
struct GrammarElement {
  enum Kind : uint8_t { kBytes, kRule, kEnd };
  Kind kind;
  int32_t value;
};

// Where a rule's frame continues when the rule ends: a position after a non-tail call, or the end
// of the whole grammar (kAccept). Tail calls (a rule reference right before kEnd) push no frame,
// so a rule called in tail position returns wherever its caller returns.
inline constexpr int32_t kAccept = -1;
inline constexpr int32_t kNoUniqueReturn = -2;

struct Grammar {
  std::vector<GrammarElement> elements;            // all alternatives, back to back
  std::vector<ByteSet> bytesets;                   // referenced by kBytes elements
  std::vector<std::vector<int32_t>> alternatives;  // [rule] start positions in `elements`
  std::vector<std::string> rule_names;             // [rule], for messages and printing
  // [rule] the one position (or kAccept) its frame returns to, or kNoUniqueReturn when it has
  // several (or none: the rule is unreachable).
  std::vector<int32_t> unique_return;
  int32_t root = 0;

  int32_t n_rules() const { return static_cast<int32_t>(alternatives.size()); }
  // The rule's return position (or kAccept) when it has exactly one, else kNoUniqueReturn.
  int32_t UniqueReturn(int32_t rule) const { return unique_return[rule]; }
  // GBNF-like text of the flattened grammar (tests, debugging).
  std::string ToString() const;
};

// Builds a Grammar: symbols are added to the open alternative of a rule; Finish() flattens,
// checks (every rule defined, root present, no left recursion, size limits) and computes returns.
class GrammarBuilder {
 public:
  struct Symbol {
    bool is_rule;
    int32_t value;  // rule id, or byteset id
  };
  using Sequence = std::vector<Symbol>;

  // Id of the rule named `name` (declared on first use, defined by Define).
  int32_t RuleId(const std::string& name);
  // A fresh rule named after `base` (base_1, base_2, ...), for helpers.
  int32_t NewRule(const std::string& base);
  // Sets the alternatives of `rule`. Throws Error(kInvalidArgument) if it is defined twice.
  void Define(int32_t rule, std::vector<Sequence> alternatives);
  bool IsDefined(int32_t rule) const { return defined_[rule]; }
  Symbol Bytes(const ByteSet& set);  // dedups identical sets
  Symbol Byte(uint8_t b);
  static Symbol Rule(int32_t rule) { return {true, rule}; }
  size_t n_symbols() const { return n_symbols_; }

  // `what` names the source in messages ("grammar", "json_schema").
  Grammar Finish(const std::string& root_name, const std::string& what);

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> index_;
  std::vector<std::vector<Sequence>> rules_;
  std::vector<bool> defined_;
  std::vector<ByteSet> bytesets_;
  size_t n_symbols_ = 0;
};

// Limits on what a grammar may grow to (after repetitions are expanded).
inline constexpr size_t kMaxGrammarElements = 1 << 20;
inline constexpr size_t kMaxGrammarRules = 1 << 16;

}  // namespace tandem
