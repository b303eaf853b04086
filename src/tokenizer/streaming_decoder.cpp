// Turns a stream of generated token ids into text that never ends inside a UTF-8 character.
#include "tokenizer/streaming_decoder.h"

#include "tokenizer/utf8.h"

namespace tandem {

std::string StreamingDecoder::Push(int32_t id) {
  pending_ += tokenizer_->TokenToPiece(id, render_special_);
  const size_t complete = Utf8CompletePrefixLength(pending_);
  std::string ready = pending_.substr(0, complete);
  pending_.erase(0, complete);
  return ready;
}

std::string StreamingDecoder::Flush() {
  std::string rest;
  rest.swap(pending_);
  return rest;
}

}  // namespace tandem
