// Typed GGUF metadata values: the 13 value type ids and one owned value (scalar, string or array).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace tandem {

static_assert(std::endian::native == std::endian::little, "GGUF I/O assumes a little-endian host");

// Numbering is gguf's `gguf_type`, stored in KV records (docs/formats.md § Metadata value types).
enum class GgufType : uint32_t {
  kU8 = 0,
  kI8 = 1,
  kU16 = 2,
  kI16 = 3,
  kU32 = 4,
  kI32 = 5,
  kF32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kU64 = 10,
  kI64 = 11,
  kF64 = 12,
};

inline constexpr uint32_t kGgufTypeIdLimit = 13;  // ids >= this are unknown

// "u8", "i32", "f32", "bool", "string", "array", ...; "type#N" for an unknown id.
std::string GgufTypeName(GgufType type);
// Bytes of one encoded scalar: 1, 2, 4 or 8; 0 for string and array.
size_t GgufScalarBytes(GgufType type);
// True for the eight integer types (not bool).
bool IsGgufInteger(GgufType type);
// `s` with quotes, backslashes and control bytes escaped (\n, \t, \xNN), cut after `max_bytes`
// bytes with "..."; for keys, names and strings in messages and listings.
std::string GgufEscape(std::string_view s, size_t max_bytes = 200);

// The GgufType that stores a C++ scalar type, e.g. GgufTypeOf<uint32_t> == kU32.
template <typename T>
constexpr GgufType GgufTypeOf();

// One metadata value. Owns its bytes, so it outlives the file it was read from and can be written.
// Numeric arrays are kept packed (little-endian, as in the file); string arrays are one buffer plus
// end offsets, so a 262k-token vocabulary costs two allocations.
class GgufValue {
 public:
  template <typename T>
  static GgufValue Scalar(T v);  // T: one of the ten numeric C++ types or bool
  static GgufValue U8(uint8_t v) { return Scalar(v); }
  static GgufValue I8(int8_t v) { return Scalar(v); }
  static GgufValue U16(uint16_t v) { return Scalar(v); }
  static GgufValue I16(int16_t v) { return Scalar(v); }
  static GgufValue U32(uint32_t v) { return Scalar(v); }
  static GgufValue I32(int32_t v) { return Scalar(v); }
  static GgufValue F32(float v) { return Scalar(v); }
  static GgufValue Bool(bool v) { return Scalar(v); }
  static GgufValue U64(uint64_t v) { return Scalar(v); }
  static GgufValue I64(int64_t v) { return Scalar(v); }
  static GgufValue F64(double v) { return Scalar(v); }
  static GgufValue String(std::string_view v);
  // Scalar of numeric or bool `type` from its encoded bytes (exactly GgufScalarBytes(type) of
  // them); throws Error(kInvalidArgument) otherwise, or for a bool byte other than 0 or 1.
  static GgufValue ScalarFromBytes(GgufType type, std::span<const uint8_t> bytes);

  // Array of numbers; the element type follows T (e.g. std::vector<int32_t> → array[i32]).
  template <typename T>
  static GgufValue Array(std::span<const T> values);
  static GgufValue BoolArray(const std::vector<bool>& values);
  static GgufValue StringArray(std::span<const std::string> values);
  static GgufValue StringArray(std::span<const std::string_view> values);
  // Array of `element` numbers (not string/array) from packed little-endian bytes; throws
  // Error(kInvalidArgument) if `element` is not numeric or the byte count is not a multiple of its
  // size. Bool elements must be 0 or 1.
  static GgufValue NumericArrayFromBytes(GgufType element, std::span<const uint8_t> bytes);

  GgufType type() const { return type_; }
  bool is_array() const { return type_ == GgufType::kArray; }
  // Element type of an array; kU8 for non-arrays.
  GgufType element_type() const { return element_type_; }
  // Number of elements of an array; 1 for a scalar or string.
  uint64_t size() const { return is_array() ? count_ : 1; }
  // "u32", "string", "array[i32]".
  std::string TypeName() const;

  // Scalar of exactly type T; throws Error(kInvalidArgument) "value has type X, expected Y".
  template <typename T>
  T As() const;
  // The string; throws unless type() is kString.
  std::string_view AsString() const;
  // Any integer scalar as uint64 if it is non-negative; nullopt for negatives and non-integers.
  std::optional<uint64_t> AsNonNegative() const;

  // Element i (< size()) of an array of exactly element type T; throws on a type mismatch.
  template <typename T>
  T At(uint64_t i) const;
  // Element i of a string array.
  std::string_view StringAt(uint64_t i) const;
  // Element i of an integer array as uint64 if non-negative; nullopt otherwise.
  std::optional<uint64_t> NonNegativeAt(uint64_t i) const;
  // All elements of an array of exactly element type T.
  template <typename T>
  std::vector<T> ToVector() const;
  // Views into this value of all elements of a string array.
  std::vector<std::string_view> ToStringViews() const;
  // Packed little-endian bytes of a numeric array (empty for other values).
  std::span<const uint8_t> array_bytes() const { return array_bytes_; }

  // Human-readable value: numbers, quoted strings, arrays as [a, b, ... (N total)] showing at most
  // `max_elements` elements (all if 0). Strings longer than 200 bytes are cut with "...".
  std::string ToString(size_t max_elements = 8) const;
  // Element i (< size()) of an array, formatted as in ToString.
  std::string ElementToString(uint64_t i) const;

  // Appends the encoded value (without the type id of the KV record) in GGUF layout to `out`.
  void AppendEncoded(std::vector<uint8_t>& out) const;

  friend bool operator==(const GgufValue& a, const GgufValue& b) = default;

 private:
  explicit GgufValue(GgufType type) : type_(type) {}
  void RequireType(GgufType want) const;
  void RequireArrayOf(GgufType want) const;
  void RequireIndex(uint64_t i) const;

  GgufType type_;
  GgufType element_type_ = GgufType::kU8;  // arrays only
  uint64_t count_ = 0;                     // arrays only: number of elements
  uint64_t scalar_ = 0;                    // numeric scalars: the value's bits, zero-extended
  std::string text_;                       // string, or all string-array elements back to back
  std::vector<uint64_t> ends_;             // string arrays: [count_] end offset in text_
  std::vector<uint8_t> array_bytes_;       // numeric arrays: [count_ * element size] packed LE
};

// ---- template definitions ----

template <typename T>
constexpr GgufType GgufTypeOf() {
  if constexpr (std::is_same_v<T, uint8_t>)
    return GgufType::kU8;
  else if constexpr (std::is_same_v<T, int8_t>)
    return GgufType::kI8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return GgufType::kU16;
  else if constexpr (std::is_same_v<T, int16_t>)
    return GgufType::kI16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return GgufType::kU32;
  else if constexpr (std::is_same_v<T, int32_t>)
    return GgufType::kI32;
  else if constexpr (std::is_same_v<T, float>)
    return GgufType::kF32;
  else if constexpr (std::is_same_v<T, bool>)
    return GgufType::kBool;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return GgufType::kU64;
  else if constexpr (std::is_same_v<T, int64_t>)
    return GgufType::kI64;
  else if constexpr (std::is_same_v<T, double>)
    return GgufType::kF64;
  else
    static_assert(sizeof(T) == 0, "not a GGUF scalar type");
}

template <typename T>
GgufValue GgufValue::Scalar(T v) {
  GgufValue out(GgufTypeOf<T>());
  if constexpr (std::is_same_v<T, bool>) {
    out.scalar_ = v ? 1 : 0;
  } else {
    std::memcpy(&out.scalar_, &v, sizeof(T));
  }
  return out;
}

template <typename T>
GgufValue GgufValue::Array(std::span<const T> values) {
  static_assert(!std::is_same_v<T, bool>, "use BoolArray");
  constexpr GgufType kType = GgufTypeOf<T>();
  return NumericArrayFromBytes(
      kType, {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(T)});
}

template <typename T>
T GgufValue::As() const {
  RequireType(GgufTypeOf<T>());
  if constexpr (std::is_same_v<T, bool>) {
    return scalar_ != 0;
  } else {
    T v;
    std::memcpy(&v, &scalar_, sizeof(T));
    return v;
  }
}

template <typename T>
T GgufValue::At(uint64_t i) const {
  RequireArrayOf(GgufTypeOf<T>());
  RequireIndex(i);
  if constexpr (std::is_same_v<T, bool>) {
    return array_bytes_[i] != 0;
  } else {
    T v;
    std::memcpy(&v, array_bytes_.data() + i * sizeof(T), sizeof(T));
    return v;
  }
}

template <typename T>
std::vector<T> GgufValue::ToVector() const {
  RequireArrayOf(GgufTypeOf<T>());
  std::vector<T> out(count_);
  for (uint64_t i = 0; i < count_; ++i) out[i] = At<T>(i);
  return out;
}

}  // namespace tandem
