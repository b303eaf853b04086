// Turns a stream of generated token ids into text that never ends inside a UTF-8 character.
#pragma once

#include <cstdint>
#include <string>

#include "tokenizer/tokenizer.h"

namespace tandem {

// Byte tokens can split one character over several tokens (e.g. an emoji as four `<0xHH>`
// tokens). Push() returns only text up to the last complete character and keeps the rest (at
// most 3 bytes that may still be completed). Bytes that can never form a well-formed sequence are
// passed through as they are, at once; callers that need valid UTF-8 use SanitizeUtf8 (utf8.h).
// Concatenating every Push() and the final Flush() gives exactly Tokenizer::Decode of the ids.
// One decoder per stream; not thread-safe. The tokenizer must outlive it.
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer, bool render_special = false)
      : tokenizer_(&tokenizer), render_special_(render_special) {}

  // Text made complete by token `id`; may be empty. Throws Error(kInvalidArgument) for ids out of
  // range (the decoder is then unchanged).
  std::string Push(int32_t id);
  // The held-back bytes (an unfinished character at the end of the stream), and a fresh start.
  std::string Flush();
  // Bytes currently held back (0-3).
  size_t pending_size() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  bool render_special_;
  std::string pending_;
};

}  // namespace tandem
