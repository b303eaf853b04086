// Sets of Unicode code points (grammar character classes) turned into byte-level alternatives:
// each alternative is the UTF-8 encoding of a range, one byte set per byte.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace tandem {

inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;

// Sorted, disjoint, non-adjacent inclusive ranges of code points.
class CodepointClass {
 public:
  void Add(uint32_t lo, uint32_t hi);  // hi <= kMaxCodepoint, lo <= hi
  void Add(uint32_t cp) { Add(cp, cp); }
  CodepointClass Negated() const;  // over [0, kMaxCodepoint]
  const std::vector<std::pair<uint32_t, uint32_t>>& ranges() const { return ranges_; }
  bool empty() const { return ranges_.empty(); }
  bool Contains(uint32_t cp) const;
  CodepointClass Minus(const CodepointClass& other) const;
  // GBNF class text, "[...]" (ASCII letters and digits verbatim, everything else escaped).
  std::string ToGbnf() const;

  // The class as alternatives of byte sets (surrogates never match): all one-byte code points in
  // one alternative, then one alternative per UTF-8 range sequence.
  std::vector<GrammarBuilder::Sequence> ToAlternatives(GrammarBuilder& builder) const;

 private:
  std::vector<std::pair<uint32_t, uint32_t>> ranges_;
};

// Appends to `out` the byte-range sequences whose UTF-8 strings are exactly the code points in
// [lo, hi] minus the surrogates: each element is one sequence of (lo byte, hi byte) ranges.
void Utf8RangeSequences(uint32_t lo, uint32_t hi,
                        std::vector<std::vector<std::pair<uint8_t, uint8_t>>>& out);

}  // namespace tandem
