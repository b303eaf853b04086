// Encodes text to token ids and decodes ids to text for a Gemma 4 style BPE vocabulary.
#include "tokenizer/tokenizer.h"

#include <algorithm>

#include "base/error.h"

namespace tandem {
namespace {

constexpr std::string_view kSpaceEscape = "\xE2\x96\x81";  // U+2581, how the vocab writes spaces

// Texts that end generation whatever their type (llama.cpp's list, Gemma family subset).
constexpr std::string_view kEogTexts[] = {"<eos>", "<turn|>", "<|tool_response>", "<end_of_turn>"};

Vocab Validated(Vocab vocab) {
  ValidateVocab(vocab);
  return vocab;
}

// -1 unless `text` is `<0xHH>` with two hex digits (either case).
int16_t ParseByteToken(std::string_view text) {
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
  int value = 0;
  for (const char c : text.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9') {
      value |= c - '0';
    } else if (c >= 'A' && c <= 'F') {
      value |= c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      value |= c - 'a' + 10;
    } else {
      return -1;
    }
  }
  return static_cast<int16_t>(value);
}

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(Validated(std::move(vocab))), bpe_(vocab_) {
  const size_t n = vocab_.tokens.size();
  byte_values_.assign(n, -1);
  for (size_t id = 0; id < n; ++id) {
    const auto sid = static_cast<int32_t>(id);
    switch (vocab_.types[id]) {
      case TokenType::kUserDefined:
        specials_.Add(vocab_.tokens[id], sid, /*always=*/true);
        break;
      case TokenType::kControl:
      case TokenType::kUnknown:
        specials_.Add(vocab_.tokens[id], sid, /*always=*/false);
        break;
      case TokenType::kByte:
        byte_values_[id] = ParseByteToken(vocab_.tokens[id]);
        break;
      default:
        break;
    }
  }
  for (const int32_t id : {vocab_.eos_id, vocab_.eot_id, vocab_.eom_id}) {
    if (id != kNoToken) eog_ids_.push_back(id);
  }
  for (const std::string_view text : kEogTexts) {
    const int32_t id = bpe_.Find(text);
    if (id != kNoToken) eog_ids_.push_back(id);
  }
  std::sort(eog_ids_.begin(), eog_ids_.end());
  eog_ids_.erase(std::unique(eog_ids_.begin(), eog_ids_.end()), eog_ids_.end());
}

std::vector<int32_t> Tokenizer::Encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 2);
  if (options.add_special && vocab_.add_bos && vocab_.bos_id != kNoToken) {
    out.push_back(vocab_.bos_id);
  }
  size_t raw_start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const auto match = specials_.MatchAt(text, pos, options.parse_special);
    if (!match) {
      ++pos;
      continue;
    }
    EncodeRaw(text.substr(raw_start, pos - raw_start), out);
    out.push_back(match->id);
    pos += match->length;
    raw_start = pos;
  }
  EncodeRaw(text.substr(raw_start), out);
  if (options.add_special && vocab_.add_eos && vocab_.eos_id != kNoToken) {
    out.push_back(vocab_.eos_id);
  }
  return out;
}

void Tokenizer::EncodeRaw(std::string_view text, std::vector<int32_t>& out) const {
  std::string escaped;
  for (size_t pos = 0; pos < text.size();) {
    if (text[pos] == '\n') {
      size_t end = text.find_first_not_of('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view run = text.substr(pos, end - pos);
      const int32_t whole = bpe_.Find(run);
      if (whole != kNoToken) {
        out.push_back(whole);
      } else {
        bpe_.EncodeWord(run, out);
      }
      pos = end;
      continue;
    }
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    escaped.clear();
    for (const char c : text.substr(pos, end - pos)) {
      if (c == ' ') {
        escaped.append(kSpaceEscape);
      } else {
        escaped.push_back(c);
      }
    }
    bpe_.EncodeWord(escaped, out);
    pos = end;
  }
}

std::string Tokenizer::TokenToPiece(int32_t id, bool render_special) const {
  if (id < 0 || id >= n_tokens()) {
    Fail(ErrorKind::kInvalidArgument, "token id " + std::to_string(id) +
                                          " is outside the vocabulary of " +
                                          std::to_string(n_tokens()) + " tokens");
  }
  const std::string& text = vocab_.tokens[id];
  switch (vocab_.types[id]) {
    case TokenType::kUserDefined:
      break;  // like normal tokens: HF runs added tokens through the decoder too
    case TokenType::kControl:
    case TokenType::kUnknown:
    case TokenType::kUnused:
      return render_special ? text : std::string();
    case TokenType::kByte:
      if (byte_values_[id] >= 0) return std::string(1, static_cast<char>(byte_values_[id]));
      return text;
    case TokenType::kNormal:
    case TokenType::kUndefined:
      break;
  }
  std::string piece;
  piece.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    if (text.compare(pos, kSpaceEscape.size(), kSpaceEscape) == 0) {
      piece.push_back(' ');
      pos += kSpaceEscape.size();
    } else {
      piece.push_back(text[pos++]);
    }
  }
  return piece;
}

std::string Tokenizer::Decode(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  for (const int32_t id : ids) out += TokenToPiece(id, render_special);
  return out;
}

bool Tokenizer::IsEog(int32_t id) const {
  return std::binary_search(eog_ids_.begin(), eog_ids_.end(), id);
}

}  // namespace tandem
