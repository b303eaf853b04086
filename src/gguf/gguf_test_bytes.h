// Test helper: builds raw GGUF byte sequences field by field, valid or deliberately broken.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace tandem::testing_util {

// Appends little-endian fields with no validation; `size()` is the offset of the next field.
class GgufBytes {
 public:
  GgufBytes& Raw(std::span<const uint8_t> b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
    return *this;
  }
  template <typename T>
  GgufBytes& Put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    return Raw(b);
  }
  GgufBytes& U8(uint8_t v) { return Put(v); }
  GgufBytes& U32(uint32_t v) { return Put(v); }
  GgufBytes& U64(uint64_t v) { return Put(v); }
  GgufBytes& F32(float v) { return Put(v); }
  // A gguf string: u64 length, then the bytes.
  GgufBytes& Str(std::string_view s) {
    U64(s.size());
    return Raw({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
  }
  // Magic "GGUF", version, tensor_count, kv_count.
  GgufBytes& Header(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    Raw(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>("GGUF"), 4));
    return U32(version).U64(n_tensors).U64(n_kv);
  }
  // KV record header: key and value type id (the value follows).
  GgufBytes& Key(std::string_view key, uint32_t type) { return Str(key).U32(type); }
  // Tensor-info record.
  GgufBytes& TensorInfo(std::string_view name, std::span<const uint64_t> ne, uint32_t type,
                        uint64_t offset) {
    Str(name).U32(static_cast<uint32_t>(ne.size()));
    for (uint64_t n : ne) U64(n);
    return U32(type).U64(offset);
  }
  // Zero bytes up to the next multiple of `alignment`.
  GgufBytes& Pad(size_t alignment) {
    while (bytes_.size() % alignment != 0) bytes_.push_back(0);
    return *this;
  }
  GgufBytes& Zeros(size_t n) {
    bytes_.insert(bytes_.end(), n, 0);
    return *this;
  }

  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace tandem::testing_util
