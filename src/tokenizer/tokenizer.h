// Encodes text to token ids and decodes ids to text for a Gemma 4 style BPE vocabulary.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/special_token_matcher.h"
#include "tokenizer/vocab.h"

namespace tandem {

struct EncodeOptions {
  bool add_special = true;    // put BOS first (and EOS last) as the vocabulary's add_* flags say
  bool parse_special = true;  // also match control/unknown token texts in the input
};

// The Gemma 4 tokenizer (docs/gemma4.md § Tokenizer). Immutable after
// construction; every method is const and thread-safe. Movable, not copyable.
//
// Encode:
//  1. Token texts are matched whole in the raw input, leftmost-longest (HF added-token
//     semantics): user-defined tokens always, control and unknown tokens when parse_special.
//  2. The text between them is split into runs of '\n' and runs of other bytes. A newline run that
//     is itself a token is emitted whole; every other run has each space replaced by U+2581 and
//     goes through BPE (BpeModel::EncodeWord). No space prefix is added.
// Decode: normal and user-defined tokens with U+2581 turned back into spaces (HF decodes added
// tokens like any other), byte tokens as their byte, control/unknown/unused tokens verbatim and
// only when rendering specials. So decode(encode(s)) == s unless s contains U+2581.
class Tokenizer {
 public:
  // Takes the vocabulary, checks it (ValidateVocab) and indexes it. Throws Error(kCorrupt).
  explicit Tokenizer(Vocab vocab);
  Tokenizer(Tokenizer&&) = default;
  Tokenizer& operator=(Tokenizer&&) = default;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  const Vocab& vocab() const { return vocab_; }
  int32_t n_tokens() const { return static_cast<int32_t>(vocab_.tokens.size()); }

  // Token ids of `text` (any bytes; invalid UTF-8 falls back to byte tokens). Never throws for
  // texts under 4 GiB.
  std::vector<int32_t> Encode(std::string_view text, const EncodeOptions& options = {}) const;

  // The bytes token `id` stands for (see Decode). Throws Error(kInvalidArgument) if id is out of
  // range.
  std::string TokenToPiece(int32_t id, bool render_special = false) const;
  // Concatenated pieces of `ids`. Throws Error(kInvalidArgument) naming the first bad id.
  std::string Decode(std::span<const int32_t> ids, bool render_special = false) const;

  // The id of the token whose text is exactly `text`, or kNoToken.
  int32_t FindToken(std::string_view text) const { return bpe_.Find(text); }
  // End of generation: the eos/eot/eom ids and tokens named <eos>, <turn|>, <|tool_response>,
  // <end_of_turn>. Ids out of range are not EOG.
  bool IsEog(int32_t id) const;
  const std::vector<int32_t>& eog_ids() const { return eog_ids_; }

 private:
  void EncodeRaw(std::string_view text, std::vector<int32_t>& out) const;

  Vocab vocab_;
  BpeModel bpe_;
  SpecialTokenMatcher specials_;
  std::vector<int16_t> byte_values_;  // [n_tokens] byte of a `<0xHH>` byte token, else -1
  std::vector<int32_t> eog_ids_;      // sorted
};

}  // namespace tandem
