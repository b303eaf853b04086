// A bounds-checked little-endian reader over a file's bytes; failures name file, field and offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "base/error.h"

namespace tandem {

// What is being read, for error messages: "kv[3] 'general.name' value", optionally element [i].
struct GgufField {
  std::string_view name;
  int64_t index = -1;  // array element, or -1

  std::string ToString() const;
};

class GgufCursor {
 public:
  // `bytes` must outlive the cursor; `source` names the file in messages.
  GgufCursor(std::span<const uint8_t> bytes, std::string_view source)
      : bytes_(bytes), source_(source) {}

  size_t offset() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }

  // Reads a little-endian scalar (integer or float); throws kCorrupt when fewer bytes remain.
  template <typename T>
  T Read(const GgufField& field) {
    T v;
    std::memcpy(&v, Take(sizeof(T), field).data(), sizeof(T));
    return v;
  }
  // The next `n` bytes, as a view into the file; throws kCorrupt when fewer remain.
  std::span<const uint8_t> Take(uint64_t n, const GgufField& field);
  // A gguf string (u64 length, then bytes); the view points into the file.
  std::string_view ReadString(const GgufField& field);

  // Throws Error(kind) "SOURCE: FIELD at offset AT: PROBLEM".
  [[noreturn]] void Fail(const GgufField& field, size_t at, const std::string& problem,
                         ErrorKind kind = ErrorKind::kCorrupt) const;

 private:
  std::span<const uint8_t> bytes_;
  std::string_view source_;
  size_t pos_ = 0;
};

}  // namespace tandem
