// An ordered GGUF key/value table with typed, error-reporting accessors (shared by reader and
// writer).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_value.h"

namespace tandem {

struct GgufKv {
  std::string key;
  GgufValue value;
};

// Keys in insertion order (the order they are written in). Lookups are O(log n).
// Accessor errors start with `source` (the file path) and name the key, e.g.
// "m.gguf: key 'general.name' has type u32, expected string" (ErrorKind::kInvalidArgument), or
// "m.gguf: key 'x' not found" (ErrorKind::kNotFound).
class GgufMetadata {
 public:
  explicit GgufMetadata(std::string source = "gguf") : source_(std::move(source)) {}

  const std::string& source() const { return source_; }
  const std::vector<GgufKv>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

  // Sets `key` (non-empty; throws kInvalidArgument otherwise). An existing key keeps its position.
  void Set(std::string_view key, GgufValue value);
  // Removes `key` if present; returns whether it was.
  bool Remove(std::string_view key);

  bool HasKey(std::string_view key) const { return index_.count(key) != 0; }
  // The value of `key`, or nullptr.
  const GgufValue* Find(std::string_view key) const;
  // The value of `key`; throws kNotFound.
  const GgufValue& Get(std::string_view key) const;

  // Scalars of exactly the stored type (u32 is not accepted for i32, as in llama.cpp).
  std::string_view GetString(std::string_view key) const;
  uint32_t GetU32(std::string_view key) const { return GetScalar<uint32_t>(key); }
  int32_t GetI32(std::string_view key) const { return GetScalar<int32_t>(key); }
  uint64_t GetU64(std::string_view key) const { return GetScalar<uint64_t>(key); }
  float GetF32(std::string_view key) const { return GetScalar<float>(key); }
  bool GetBool(std::string_view key) const { return GetScalar<bool>(key); }
  // nullopt when the key is absent; throws when it is present with another type.
  std::optional<std::string_view> FindString(std::string_view key) const;
  std::optional<uint32_t> FindU32(std::string_view key) const { return FindScalar<uint32_t>(key); }
  std::optional<int32_t> FindI32(std::string_view key) const { return FindScalar<int32_t>(key); }
  std::optional<float> FindF32(std::string_view key) const { return FindScalar<float>(key); }
  std::optional<bool> FindBool(std::string_view key) const { return FindScalar<bool>(key); }

  // Arrays of exactly the given element type. String views point into this table.
  std::vector<std::string_view> GetStringArray(std::string_view key) const;
  std::vector<float> GetF32Array(std::string_view key) const { return GetArray<float>(key); }
  std::vector<int32_t> GetI32Array(std::string_view key) const { return GetArray<int32_t>(key); }
  std::vector<uint32_t> GetU32Array(std::string_view key) const { return GetArray<uint32_t>(key); }

  // Per-layer integers: a scalar of any integer type (broadcast to n_layer values) or an array of
  // exactly n_layer integers of any integer type. Every value must lie in [0, 2^32).
  std::vector<uint32_t> GetU32PerLayer(std::string_view key, uint32_t n_layer) const;
  // Per-layer flags: a bool scalar (broadcast) or an array[bool] of exactly n_layer elements.
  std::vector<bool> GetBoolPerLayer(std::string_view key, uint32_t n_layer) const;

  friend bool operator==(const GgufMetadata& a, const GgufMetadata& b) {
    if (a.entries_.size() != b.entries_.size()) return false;
    for (size_t i = 0; i < a.entries_.size(); ++i) {
      if (a.entries_[i].key != b.entries_[i].key || !(a.entries_[i].value == b.entries_[i].value))
        return false;
    }
    return true;
  }

 private:
  template <typename T>
  T GetScalar(std::string_view key) const;
  template <typename T>
  std::optional<T> FindScalar(std::string_view key) const;
  template <typename T>
  std::vector<T> GetArray(std::string_view key) const;
  [[noreturn]] void FailType(std::string_view key, const GgufValue& v,
                             const std::string& expected) const;
  [[noreturn]] void FailValue(std::string_view key, const std::string& problem) const;

  std::string source_;
  std::vector<GgufKv> entries_;
  std::map<std::string, size_t, std::less<>> index_;  // key -> position in entries_
};

template <typename T>
T GgufMetadata::GetScalar(std::string_view key) const {
  const GgufValue& v = Get(key);
  if (v.type() != GgufTypeOf<T>()) FailType(key, v, GgufTypeName(GgufTypeOf<T>()));
  return v.As<T>();
}

template <typename T>
std::optional<T> GgufMetadata::FindScalar(std::string_view key) const {
  if (!HasKey(key)) return std::nullopt;
  return GetScalar<T>(key);
}

template <typename T>
std::vector<T> GgufMetadata::GetArray(std::string_view key) const {
  const GgufValue& v = Get(key);
  if (!v.is_array() || v.element_type() != GgufTypeOf<T>()) {
    FailType(key, v, "array[" + GgufTypeName(GgufTypeOf<T>()) + "]");
  }
  return v.ToVector<T>();
}

}  // namespace tandem
