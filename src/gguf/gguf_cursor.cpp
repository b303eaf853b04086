// Bounds-checked reads for the GGUF parser.
#include "gguf/gguf_cursor.h"

namespace tandem {

std::string GgufField::ToString() const {
  std::string out(name);
  if (index >= 0) {
    out += '[';
    out += std::to_string(index);
    out += ']';
  }
  return out;
}

std::span<const uint8_t> GgufCursor::Take(uint64_t n, const GgufField& field) {
  if (n > remaining()) {
    Fail(field, pos_,
         "truncated: needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) +
             " left in the file");
  }
  std::span<const uint8_t> out = bytes_.subspan(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return out;
}

std::string_view GgufCursor::ReadString(const GgufField& field) {
  size_t at = pos_;
  uint64_t length = Read<uint64_t>(field);
  if (length > remaining()) {
    Fail(field, at,
         "string length " + std::to_string(length) + " exceeds the " + std::to_string(remaining()) +
             " bytes left in the file");
  }
  std::span<const uint8_t> b = Take(length, field);
  return std::string_view(reinterpret_cast<const char*>(b.data()), b.size());
}

void GgufCursor::Fail(const GgufField& field, size_t at, const std::string& problem,
                      ErrorKind kind) const {
  throw Error(kind, std::string(source_) + ": " + field.ToString() + " at byte " +
                        std::to_string(at) + ": " + problem);
}

}  // namespace tandem
