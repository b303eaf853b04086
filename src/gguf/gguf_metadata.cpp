// GGUF key/value table: ordered storage, typed accessors and scalar-or-array per-layer helpers.
#include "gguf/gguf_metadata.h"

#include <limits>

namespace tandem {

void GgufMetadata::Set(std::string_view key, GgufValue value) {
  if (key.empty()) Fail(ErrorKind::kInvalidArgument, source_ + ": empty metadata key");
  auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].value = std::move(value);
    return;
  }
  index_.emplace(std::string(key), entries_.size());
  entries_.push_back({std::string(key), std::move(value)});
}

bool GgufMetadata::Remove(std::string_view key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  size_t pos = it->second;
  index_.erase(it);
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(pos));
  for (auto& [k, i] : index_) {
    if (i > pos) --i;
  }
  return true;
}

const GgufValue* GgufMetadata::Find(std::string_view key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].value;
}

const GgufValue& GgufMetadata::Get(std::string_view key) const {
  const GgufValue* v = Find(key);
  if (v == nullptr)
    Fail(ErrorKind::kNotFound, source_ + ": key '" + std::string(key) + "' not found");
  return *v;
}

void GgufMetadata::FailType(std::string_view key, const GgufValue& v,
                            const std::string& expected) const {
  Fail(ErrorKind::kInvalidArgument, source_ + ": key '" + std::string(key) + "' has type " +
                                        v.TypeName() + ", expected " + expected);
}

void GgufMetadata::FailValue(std::string_view key, const std::string& problem) const {
  Fail(ErrorKind::kInvalidArgument, source_ + ": key '" + std::string(key) + "' " + problem);
}

std::string_view GgufMetadata::GetString(std::string_view key) const {
  const GgufValue& v = Get(key);
  if (v.type() != GgufType::kString) FailType(key, v, "string");
  return v.AsString();
}

std::optional<std::string_view> GgufMetadata::FindString(std::string_view key) const {
  if (!HasKey(key)) return std::nullopt;
  return GetString(key);
}

std::vector<std::string_view> GgufMetadata::GetStringArray(std::string_view key) const {
  const GgufValue& v = Get(key);
  if (!v.is_array() || v.element_type() != GgufType::kString) FailType(key, v, "array[string]");
  return v.ToStringViews();
}

std::vector<uint32_t> GgufMetadata::GetU32PerLayer(std::string_view key, uint32_t n_layer) const {
  const GgufValue& v = Get(key);
  auto checked = [&](std::optional<uint64_t> x, uint64_t i) -> uint32_t {
    if (!x || *x > std::numeric_limits<uint32_t>::max()) {
      std::string what = v.is_array()
                             ? "element " + std::to_string(i) + " (" + v.ElementToString(i) + ")"
                             : "value (" + v.ToString() + ")";
      FailValue(key, what + " is out of range for a per-layer count, expected [0, 2^32)");
    }
    return static_cast<uint32_t>(*x);
  };
  if (!v.is_array()) {
    if (!IsGgufInteger(v.type())) FailType(key, v, "an integer or an array of integers");
    return std::vector<uint32_t>(n_layer, checked(v.AsNonNegative(), 0));
  }
  if (!IsGgufInteger(v.element_type())) FailType(key, v, "an integer or an array of integers");
  if (v.size() != n_layer) {
    FailValue(key, "has " + std::to_string(v.size()) + " elements, expected one per layer (" +
                       std::to_string(n_layer) + ")");
  }
  std::vector<uint32_t> out(n_layer);
  for (uint32_t i = 0; i < n_layer; ++i) out[i] = checked(v.NonNegativeAt(i), i);
  return out;
}

std::vector<bool> GgufMetadata::GetBoolPerLayer(std::string_view key, uint32_t n_layer) const {
  const GgufValue& v = Get(key);
  if (v.type() == GgufType::kBool) return std::vector<bool>(n_layer, v.As<bool>());
  if (!v.is_array() || v.element_type() != GgufType::kBool) {
    FailType(key, v, "bool or array[bool]");
  }
  if (v.size() != n_layer) {
    FailValue(key, "has " + std::to_string(v.size()) + " elements, expected one per layer (" +
                       std::to_string(n_layer) + ")");
  }
  return v.ToVector<bool>();
}

}  // namespace tandem
