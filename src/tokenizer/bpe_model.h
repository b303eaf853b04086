// Rank-ordered BPE over the UTF-8 characters of one word, with `<0xHH>` byte fallback.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"
#include "tokenizer/vocab.h"

namespace tandem {

// The encoding half of a BPE vocabulary: text -> id lookup, the merge table and the byte tokens.
// Holds views into `vocab`, which must outlive it unchanged (moving the vocab's vectors is fine).
// All methods are const and thread-safe.
class BpeModel {
 public:
  // Indexes `vocab` (assumed to pass ValidateVocab). Throws Error(kCorrupt) naming both ids if two
  // tokens have the same text. Merges whose halves or result are not tokens can never apply to id
  // symbols; they are skipped with one warning naming how many.
  explicit BpeModel(const Vocab& vocab);

  // The id of the token whose text is exactly `text` (any type), or kNoToken.
  int32_t Find(std::string_view text) const { return index_.Find(text); }

  // Appends the tokens of `word` to `out`. The word is split into UTF-8 characters (a byte that
  // does not start a well-formed sequence is a character of its own that never merges); then the
  // adjacent pair with the lowest merge rank is merged, leftmost first on ties, until no pair has a
  // rank. A final piece that is not a token becomes one `<0xHH>` token per byte, or the unknown
  // token if some byte token is missing (as HF does). Cost O(n log n) in the word's length.
  void EncodeWord(std::string_view word, std::vector<int32_t>& out) const;

  size_t n_merges() const { return merges_.size(); }

 private:
  void AppendBytes(std::string_view piece, std::vector<int32_t>& out) const;

  TokenIndex index_;
  MergeTable merges_;
  std::array<int32_t, 128> ascii_ids_{};  // ids_ for one-byte texts, kNoToken if none
  std::array<int32_t, 256> byte_ids_{};   // id of `<0xHH>` per byte, kNoToken if none
  int32_t unk_id_ = kNoToken;
};

}  // namespace tandem
