#include "media/base64.h"

#include <array>
#include <string>

#include "base/error.h"

namespace tandem {
namespace {

constexpr uint8_t kInvalid = 0xff;

constexpr std::array<uint8_t, 256> MakeDecodeTable() {
  std::array<uint8_t, 256> table{};
  for (auto& v : table) v = kInvalid;
  for (int i = 0; i < 26; ++i) {
    table['A' + i] = static_cast<uint8_t>(i);
    table['a' + i] = static_cast<uint8_t>(26 + i);
  }
  for (int i = 0; i < 10; ++i) table['0' + i] = static_cast<uint8_t>(52 + i);
  table['+'] = 62;
  table['/'] = 63;
  return table;
}

constexpr std::array<uint8_t, 256> kDecode = MakeDecodeTable();

std::string Describe(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u > 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char* hex = "0123456789abcdef";
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

// The number of trailing '=' characters.
size_t PaddingLength(std::string_view text) {
  size_t pad = 0;
  while (pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  return pad;
}

// Refuses misplaced padding and a dangling final character (the characters themselves are
// checked while decoding).
void CheckLength(std::string_view text) {
  const size_t pad = PaddingLength(text);
  const size_t body = text.size() - pad;
  if (pad > 0 && (pad > 2 || text.size() % 4 != 0)) {
    Fail(ErrorKind::kInvalidArgument, "base64: bad '=' padding at offset " + std::to_string(body));
  }
  if (body % 4 == 1) {
    Fail(ErrorKind::kInvalidArgument,
         "base64: " + std::to_string(body) + " characters leave one dangling character");
  }
}

// Bytes `n` unpadded characters decode to; a dangling character counts for nothing.
size_t BytesFor(size_t n) {
  return n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1);
}

}  // namespace

size_t Base64DecodedSize(std::string_view text) {
  CheckLength(text);
  return BytesFor(text.size() - PaddingLength(text));
}

std::vector<uint8_t> DecodeBase64(std::string_view text, size_t max_decoded_bytes) {
  const std::string_view body = text.substr(0, text.size() - PaddingLength(text));
  const size_t size = BytesFor(body.size());
  if (size > max_decoded_bytes) {
    Fail(ErrorKind::kInvalidArgument, "base64: decodes to " + std::to_string(size) +
                                          " bytes, over the limit of " +
                                          std::to_string(max_decoded_bytes));
  }
  std::vector<uint8_t> out;
  out.reserve(size);
  uint32_t bits = 0;
  int nbits = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    uint8_t v = kDecode[static_cast<unsigned char>(body[i])];
    if (v == kInvalid) {
      Fail(ErrorKind::kInvalidArgument,
           "base64: invalid " + Describe(body[i]) + " at offset " + std::to_string(i));
    }
    bits = (bits << 6) | v;
    nbits += 6;
    if (nbits >= 8) {
      nbits -= 8;
      out.push_back(static_cast<uint8_t>(bits >> nbits));
      bits &= (1u << nbits) - 1;
    }
  }
  CheckLength(text);
  if (bits != 0) {
    Fail(ErrorKind::kInvalidArgument,
         "base64: non-zero unused bits in the last character at offset " +
             std::to_string(body.size() - 1));
  }
  return out;
}

}  // namespace tandem
