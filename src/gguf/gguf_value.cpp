// GGUF metadata values: construction, checked access, display and encoding.
#include "gguf/gguf_value.h"

#include <charconv>
#include <limits>

namespace tandem {
namespace {

// Shortest text that reads back to the same float/double.
template <typename F>
std::string FormatFloat(F v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out += GgufEscape(s);
  out += '"';
  return out;
}

void AppendBytes(std::vector<uint8_t>& out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}

void AppendU64(std::vector<uint8_t>& out, uint64_t v) {
  AppendBytes(out, &v, sizeof(v));
}

// Integer at `p` of integer type `type` as uint64 if non-negative.
std::optional<uint64_t> ReadNonNegative(GgufType type, const void* p) {
  auto read = [p]<typename T>(T) -> std::optional<uint64_t> {
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::is_signed_v<T>) {
      if (v < 0) return std::nullopt;
    }
    return static_cast<uint64_t>(v);
  };
  switch (type) {
    case GgufType::kU8:
      return read(uint8_t{});
    case GgufType::kI8:
      return read(int8_t{});
    case GgufType::kU16:
      return read(uint16_t{});
    case GgufType::kI16:
      return read(int16_t{});
    case GgufType::kU32:
      return read(uint32_t{});
    case GgufType::kI32:
      return read(int32_t{});
    case GgufType::kU64:
      return read(uint64_t{});
    case GgufType::kI64:
      return read(int64_t{});
    default:
      return std::nullopt;
  }
}

// Scalar of numeric type `type` at `p` as text.
std::string FormatNumber(GgufType type, const void* p) {
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  switch (type) {
    case GgufType::kU8:
      return std::to_string(load(uint8_t{}));
    case GgufType::kI8:
      return std::to_string(load(int8_t{}));
    case GgufType::kU16:
      return std::to_string(load(uint16_t{}));
    case GgufType::kI16:
      return std::to_string(load(int16_t{}));
    case GgufType::kU32:
      return std::to_string(load(uint32_t{}));
    case GgufType::kI32:
      return std::to_string(load(int32_t{}));
    case GgufType::kU64:
      return std::to_string(load(uint64_t{}));
    case GgufType::kI64:
      return std::to_string(load(int64_t{}));
    case GgufType::kF32:
      return FormatFloat(load(float{}));
    case GgufType::kF64:
      return FormatFloat(load(double{}));
    case GgufType::kBool:
      return load(uint8_t{}) != 0 ? "true" : "false";
    default:
      return "?";
  }
}

}  // namespace

std::string GgufEscape(std::string_view s, size_t max_bytes) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < max_bytes; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > max_bytes) out += "...";
  return out;
}

std::string GgufTypeName(GgufType type) {
  switch (type) {
    case GgufType::kU8:
      return "u8";
    case GgufType::kI8:
      return "i8";
    case GgufType::kU16:
      return "u16";
    case GgufType::kI16:
      return "i16";
    case GgufType::kU32:
      return "u32";
    case GgufType::kI32:
      return "i32";
    case GgufType::kF32:
      return "f32";
    case GgufType::kBool:
      return "bool";
    case GgufType::kString:
      return "string";
    case GgufType::kArray:
      return "array";
    case GgufType::kU64:
      return "u64";
    case GgufType::kI64:
      return "i64";
    case GgufType::kF64:
      return "f64";
  }
  return "type#" + std::to_string(static_cast<uint32_t>(type));
}

size_t GgufScalarBytes(GgufType type) {
  switch (type) {
    case GgufType::kU8:
    case GgufType::kI8:
    case GgufType::kBool:
      return 1;
    case GgufType::kU16:
    case GgufType::kI16:
      return 2;
    case GgufType::kU32:
    case GgufType::kI32:
    case GgufType::kF32:
      return 4;
    case GgufType::kU64:
    case GgufType::kI64:
    case GgufType::kF64:
      return 8;
    default:
      return 0;
  }
}

bool IsGgufInteger(GgufType type) {
  return GgufScalarBytes(type) != 0 && type != GgufType::kBool && type != GgufType::kF32 &&
         type != GgufType::kF64;
}

GgufValue GgufValue::String(std::string_view v) {
  GgufValue out(GgufType::kString);
  out.text_ = std::string(v);
  return out;
}

GgufValue GgufValue::ScalarFromBytes(GgufType type, std::span<const uint8_t> bytes) {
  size_t size = GgufScalarBytes(type);
  if (size == 0 || bytes.size() != size) {
    Fail(ErrorKind::kInvalidArgument, "GGUF scalar of type " + GgufTypeName(type) + " from " +
                                          std::to_string(bytes.size()) + " bytes");
  }
  if (type == GgufType::kBool && bytes[0] > 1) {
    Fail(ErrorKind::kInvalidArgument,
         "GGUF bool is " + std::to_string(bytes[0]) + ", expected 0 or 1");
  }
  GgufValue out(type);
  std::memcpy(&out.scalar_, bytes.data(), size);
  return out;
}

GgufValue GgufValue::BoolArray(const std::vector<bool>& values) {
  std::vector<uint8_t> bytes(values.begin(), values.end());
  return NumericArrayFromBytes(GgufType::kBool, bytes);
}

GgufValue GgufValue::StringArray(std::span<const std::string> values) {
  std::vector<std::string_view> views(values.begin(), values.end());
  return StringArray(views);
}

GgufValue GgufValue::StringArray(std::span<const std::string_view> values) {
  GgufValue out(GgufType::kArray);
  out.element_type_ = GgufType::kString;
  out.count_ = values.size();
  size_t total = 0;
  for (std::string_view s : values) total += s.size();
  out.text_.reserve(total);
  out.ends_.reserve(values.size());
  for (std::string_view s : values) {
    out.text_ += s;
    out.ends_.push_back(out.text_.size());
  }
  return out;
}

GgufValue GgufValue::NumericArrayFromBytes(GgufType element, std::span<const uint8_t> bytes) {
  size_t size = GgufScalarBytes(element);
  if (size == 0) {
    Fail(ErrorKind::kInvalidArgument,
         "GGUF array element type must be numeric or bool, got " + GgufTypeName(element));
  }
  if (bytes.size() % size != 0) {
    Fail(ErrorKind::kInvalidArgument, "GGUF array of " + GgufTypeName(element) + ": " +
                                          std::to_string(bytes.size()) +
                                          " bytes is not a whole number of elements");
  }
  if (element == GgufType::kBool) {
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] > 1) {
        Fail(ErrorKind::kInvalidArgument, "GGUF bool array element " + std::to_string(i) + " is " +
                                              std::to_string(bytes[i]) + ", expected 0 or 1");
      }
    }
  }
  GgufValue out(GgufType::kArray);
  out.element_type_ = element;
  out.count_ = bytes.size() / size;
  out.array_bytes_.assign(bytes.begin(), bytes.end());
  return out;
}

std::string GgufValue::TypeName() const {
  if (is_array()) return "array[" + GgufTypeName(element_type_) + "]";
  return GgufTypeName(type_);
}

void GgufValue::RequireType(GgufType want) const {
  if (type_ != want) {
    Fail(ErrorKind::kInvalidArgument,
         "value has type " + TypeName() + ", expected " + GgufTypeName(want));
  }
}

void GgufValue::RequireArrayOf(GgufType want) const {
  if (!is_array() || element_type_ != want) {
    Fail(ErrorKind::kInvalidArgument,
         "value has type " + TypeName() + ", expected array[" + GgufTypeName(want) + "]");
  }
}

void GgufValue::RequireIndex(uint64_t i) const {
  if (i >= count_) {
    Fail(ErrorKind::kInvalidArgument, "array index " + std::to_string(i) + " out of range (" +
                                          std::to_string(count_) + " elements)");
  }
}

std::string_view GgufValue::AsString() const {
  RequireType(GgufType::kString);
  return text_;
}

std::optional<uint64_t> GgufValue::AsNonNegative() const {
  if (!IsGgufInteger(type_)) return std::nullopt;
  return ReadNonNegative(type_, &scalar_);
}

std::string_view GgufValue::StringAt(uint64_t i) const {
  RequireArrayOf(GgufType::kString);
  RequireIndex(i);
  uint64_t begin = i == 0 ? 0 : ends_[i - 1];
  return std::string_view(text_).substr(begin, ends_[i] - begin);
}

std::optional<uint64_t> GgufValue::NonNegativeAt(uint64_t i) const {
  if (!is_array() || !IsGgufInteger(element_type_) || i >= count_) return std::nullopt;
  return ReadNonNegative(element_type_, array_bytes_.data() + i * GgufScalarBytes(element_type_));
}

std::vector<std::string_view> GgufValue::ToStringViews() const {
  RequireArrayOf(GgufType::kString);
  std::vector<std::string_view> out;
  out.reserve(count_);
  for (uint64_t i = 0; i < count_; ++i) out.push_back(StringAt(i));
  return out;
}

std::string GgufValue::ElementToString(uint64_t i) const {
  RequireIndex(i);
  if (element_type_ == GgufType::kString) return Quote(StringAt(i));
  return FormatNumber(element_type_, array_bytes_.data() + i * GgufScalarBytes(element_type_));
}

std::string GgufValue::ToString(size_t max_elements) const {
  if (type_ == GgufType::kString) return Quote(text_);
  if (!is_array()) return FormatNumber(type_, &scalar_);
  uint64_t shown = count_;
  if (max_elements != 0 && shown > max_elements) shown = max_elements;
  std::string out = "[";
  for (uint64_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += ElementToString(i);
  }
  if (shown < count_) out += ", ... (" + std::to_string(count_) + " total)";
  out += "]";
  return out;
}

void GgufValue::AppendEncoded(std::vector<uint8_t>& out) const {
  if (type_ == GgufType::kString) {
    AppendU64(out, text_.size());
    AppendBytes(out, text_.data(), text_.size());
  } else if (!is_array()) {
    AppendBytes(out, &scalar_, GgufScalarBytes(type_));
  } else {
    uint32_t element = static_cast<uint32_t>(element_type_);
    AppendBytes(out, &element, sizeof(element));
    AppendU64(out, count_);
    if (element_type_ == GgufType::kString) {
      for (uint64_t i = 0; i < count_; ++i) {
        std::string_view s = StringAt(i);
        AppendU64(out, s.size());
        AppendBytes(out, s.data(), s.size());
      }
    } else {
      AppendBytes(out, array_bytes_.data(), array_bytes_.size());
    }
  }
}

}  // namespace tandem
