// The tokenizer's vocabulary as plain data: token texts, types, merge ranks and special ids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

// GGUF `tokenizer.ggml.token_type` values (docs/formats.md § Token types, as in SentencePiece).
// The type decides how a token takes part in encoding and decoding:
//   kNormal, kUndefined  produced by BPE; decoded with U+2581 turned back into spaces.
//   kControl, kUnknown   matched in text only when parsing specials; rendered only on request.
//   kUserDefined         always matched whole in text; always rendered verbatim.
//   kByte                `<0xHH>` byte fallback; decoded to that one byte.
//   kUnused              never matched; rendered only on request.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

inline constexpr int32_t kTokenTypeLimit = 7;  // stored values >= this are invalid
inline constexpr int32_t kNoToken = -1;        // "absent" for the special ids below

// "normal", "control", ... ; "type#N" for values outside the enum.
std::string TokenTypeName(TokenType type);

// A Gemma 4 style BPE vocabulary (docs/gemma4.md): merges by rank over UTF-8 text in which spaces
// are written as U+2581, `<0xHH>` byte fallback, no space prefix. Built by the GGUF and
// tokenizer.json readers; consumed by Tokenizer, which checks it (ValidateVocab).
struct Vocab {
  std::string source;               // where it came from (a path), for error messages
  std::vector<std::string> tokens;  // [n_tokens] token text; index = token id
  std::vector<TokenType> types;     // [n_tokens]
  std::vector<float> scores;        // [n_tokens] or empty; unused by BPE, kept for round trips
  std::vector<std::string> merges;  // [n_merges] "left right"; rank = index (lower merges first)

  int32_t bos_id = kNoToken;
  int32_t eos_id = kNoToken;
  int32_t eot_id = kNoToken;
  int32_t eom_id = kNoToken;
  int32_t unk_id = kNoToken;
  int32_t pad_id = kNoToken;
  int32_t mask_id = kNoToken;
  bool add_bos = true;   // Encode() with add_special puts bos_id first
  bool add_eos = false;  // ... and eos_id last

  size_t size() const { return tokens.size(); }
};

// Checks what the tokenizer relies on: types (and scores, if any) have one entry per token, every
// type is known, every special id is kNoToken or in range. Throws Error(kCorrupt) whose message
// starts with vocab.source and names the token id or field. (Duplicate texts are found when the
// Tokenizer indexes the vocabulary, which needs the hash table anyway.)
void ValidateVocab(const Vocab& vocab);

// Splits a merge "left right" at the first space after position 0 (llama.cpp's rule). Returns
// false if there is no such space.
bool SplitMerge(std::string_view merge, std::string_view* left, std::string_view* right);

}  // namespace tandem
