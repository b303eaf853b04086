// Test helper: small hand-made Gemma 4 style vocabularies for the tokenizer unit tests.
#pragma once

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/vocab.h"

namespace tandem::testing {

inline constexpr int32_t kPad = 0;
inline constexpr int32_t kEos = 1;
inline constexpr int32_t kBos = 2;
inline constexpr int32_t kUnk = 3;
inline constexpr int32_t kFirstByte = 4;  // <0x00> when the vocabulary has byte tokens

// <pad> <eos> <bos> (control), <unk> (unknown), then `<0x00>`..`<0xFF>` if `with_bytes`, then
// `extra` in order. Merges are "left right" strings, rank = position.
inline Vocab MakeVocab(const std::vector<std::pair<std::string, TokenType>>& extra,
                       const std::vector<std::string>& merges, bool with_bytes = true) {
  Vocab v;
  v.source = "test-vocab";
  const auto add = [&v](std::string text, TokenType type) {
    v.tokens.push_back(std::move(text));
    v.types.push_back(type);
  };
  add("<pad>", TokenType::kControl);
  add("<eos>", TokenType::kControl);
  add("<bos>", TokenType::kControl);
  add("<unk>", TokenType::kUnknown);
  if (with_bytes) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      add(name, TokenType::kByte);
    }
  }
  for (const auto& [text, type] : extra) add(text, type);
  v.merges = merges;
  v.pad_id = kPad;
  v.eos_id = kEos;
  v.bos_id = kBos;
  v.unk_id = kUnk;
  return v;
}

// Id of `text` in `v` (linear search), or -1.
inline int32_t IdOf(const Vocab& v, const std::string& text) {
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    if (v.tokens[i] == text) return static_cast<int32_t>(i);
  }
  return -1;
}

}  // namespace tandem::testing
