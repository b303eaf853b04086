#include "grammar/codepoint_class.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "tokenizer/utf8.h"

namespace tandem {

void CodepointClass::Add(uint32_t lo, uint32_t hi) {
  ranges_.push_back({lo, hi});
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (const auto& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  ranges_ = std::move(merged);
}

CodepointClass CodepointClass::Negated() const {
  CodepointClass out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : ranges_) {
    if (lo > next) out.ranges_.push_back({next, lo - 1});
    next = hi + 1;
  }
  if (next <= kMaxCodepoint) out.ranges_.push_back({next, kMaxCodepoint});
  return out;
}

bool CodepointClass::Contains(uint32_t cp) const {
  for (const auto& [lo, hi] : ranges_) {
    if (cp >= lo && cp <= hi) return true;
  }
  return false;
}

CodepointClass CodepointClass::Minus(const CodepointClass& other) const {
  CodepointClass out;
  const CodepointClass keep = other.Negated();
  for (const auto& [a, b] : ranges_) {
    for (const auto& [c, d] : keep.ranges_) {
      const uint32_t lo = std::max(a, c), hi = std::min(b, d);
      if (lo <= hi) out.Add(lo, hi);
    }
  }
  return out;
}

namespace {

void AppendGbnfChar(uint32_t cp, std::string& out) {
  if ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) {
    out.push_back(static_cast<char>(cp));
    return;
  }
  char buf[16];
  if (cp < 0x80) {
    std::snprintf(buf, sizeof(buf), "\\x%02X", cp);
  } else {
    std::snprintf(buf, sizeof(buf), "\\U%08X", cp);
  }
  out.append(buf);
}

}  // namespace

std::string CodepointClass::ToGbnf() const {
  std::string out = "[";
  for (const auto& [lo, hi] : ranges_) {
    AppendGbnfChar(lo, out);
    if (hi > lo) {
      out.push_back('-');
      AppendGbnfChar(hi, out);
    }
  }
  out.push_back(']');
  return out;
}

namespace {

std::string Encode(uint32_t cp) {
  std::string s;
  AppendUtf8(static_cast<char32_t>(cp), s);
  return s;
}

void SplitSameLength(uint32_t lo, uint32_t hi,
                     std::vector<std::vector<std::pair<uint8_t, uint8_t>>>& out) {
  const size_t n = Encode(lo).size();
  for (size_t i = 1; i < n; ++i) {
    const uint32_t m = (uint32_t{1} << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        SplitSameLength(lo, lo | m, out);
        SplitSameLength((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        SplitSameLength(lo, (hi & ~m) - 1, out);
        SplitSameLength(hi & ~m, hi, out);
        return;
      }
    }
  }
  const std::string a = Encode(lo), b = Encode(hi);
  std::vector<std::pair<uint8_t, uint8_t>> seq;
  for (size_t i = 0; i < n; ++i) {
    seq.push_back({static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i])});
  }
  out.push_back(std::move(seq));
}

}  // namespace

void Utf8RangeSequences(uint32_t lo, uint32_t hi,
                        std::vector<std::vector<std::pair<uint8_t, uint8_t>>>& out) {
  // Cut at the surrogates and at the encoding-length boundaries.
  const uint32_t cuts[][2] = {
      {0, 0x7F}, {0x80, 0x7FF}, {0x800, 0xD7FF}, {0xE000, 0xFFFF}, {0x10000, 0x10FFFF}};
  for (const auto& c : cuts) {
    const uint32_t a = std::max(lo, c[0]), b = std::min(hi, c[1]);
    if (a <= b) SplitSameLength(a, b, out);
  }
}

std::vector<GrammarBuilder::Sequence> CodepointClass::ToAlternatives(
    GrammarBuilder& builder) const {
  std::vector<GrammarBuilder::Sequence> alts;
  ByteSet ascii;
  std::vector<std::vector<std::pair<uint8_t, uint8_t>>> seqs;
  for (const auto& [lo, hi] : ranges_) {
    if (lo < 0x80)
      ascii.AddRange(static_cast<uint8_t>(lo), static_cast<uint8_t>(std::min(hi, 0x7Fu)));
    if (hi >= 0x80) Utf8RangeSequences(std::max(lo, 0x80u), hi, seqs);
  }
  if (ascii.Count() > 0) alts.push_back({builder.Bytes(ascii)});
  for (const auto& seq : seqs) {
    GrammarBuilder::Sequence s;
    for (const auto& [a, b] : seq) {
      ByteSet set;
      set.AddRange(a, b);
      s.push_back(builder.Bytes(set));
    }
    alts.push_back(std::move(s));
  }
  return alts;
}

}  // namespace tandem
