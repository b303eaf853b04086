#include "tensor/type_traits.h"

#include <array>
#include <cctype>

#include "base/error.h"

namespace tandem {
namespace {

using T = TensorType;

// dequantizable: what tensor/dequantize.cpp implements (docs/formats.md § Block layouts).
constexpr std::array<TensorTypeTraits, 35> kTable = {{
    {T::kF32, "f32", 1, 4, true},
    {T::kF16, "f16", 1, 2, true},
    {T::kQ4_0, "q4_0", 32, 18, true},
    {T::kQ4_1, "q4_1", 32, 20, true},
    {T::kQ5_0, "q5_0", 32, 22, true},
    {T::kQ5_1, "q5_1", 32, 24, true},
    {T::kQ8_0, "q8_0", 32, 34, true},
    {T::kQ8_1, "q8_1", 32, 36, false},
    {T::kQ2_K, "q2_K", 256, 84, true},
    {T::kQ3_K, "q3_K", 256, 110, true},
    {T::kQ4_K, "q4_K", 256, 144, true},
    {T::kQ5_K, "q5_K", 256, 176, true},
    {T::kQ6_K, "q6_K", 256, 210, true},
    {T::kQ8_K, "q8_K", 256, 292, false},
    {T::kIQ2_XXS, "iq2_xxs", 256, 66, false},
    {T::kIQ2_XS, "iq2_xs", 256, 74, false},
    {T::kIQ3_XXS, "iq3_xxs", 256, 98, false},
    {T::kIQ1_S, "iq1_s", 256, 50, false},
    {T::kIQ4_NL, "iq4_nl", 32, 18, true},
    {T::kIQ3_S, "iq3_s", 256, 110, false},
    {T::kIQ2_S, "iq2_s", 256, 82, false},
    {T::kIQ4_XS, "iq4_xs", 256, 136, true},
    {T::kI8, "i8", 1, 1, false},
    {T::kI16, "i16", 1, 2, false},
    {T::kI32, "i32", 1, 4, false},
    {T::kI64, "i64", 1, 8, false},
    {T::kF64, "f64", 1, 8, false},
    {T::kIQ1_M, "iq1_m", 256, 56, false},
    {T::kBF16, "bf16", 1, 2, true},
    {T::kTQ1_0, "tq1_0", 256, 54, false},
    {T::kTQ2_0, "tq2_0", 256, 66, false},
    {T::kMXFP4, "mxfp4", 32, 17, true},
    {T::kNVFP4, "nvfp4", 64, 36, false},
    {T::kQ1_0, "q1_0", 128, 18, false},
    {T::kQ2_0, "q2_0", 64, 18, false},
}};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace

std::optional<TensorTypeTraits> FindTensorTypeTraits(uint32_t id) {
  for (const auto& t : kTable) {
    if (static_cast<uint32_t>(t.type) == id) return t;
  }
  return std::nullopt;
}

const TensorTypeTraits& GetTensorTypeTraits(TensorType type) {
  for (const auto& t : kTable) {
    if (t.type == type) return t;
  }
  Fail(ErrorKind::kInternal, "GetTensorTypeTraits: invalid tensor type id " +
                                 std::to_string(static_cast<uint32_t>(type)));
}

void CheckRowLength(TensorType type, int64_t n, const char* what) {
  const TensorTypeTraits& t = GetTensorTypeTraits(type);
  if (n < 0 || n % t.block_size != 0) {
    Fail(ErrorKind::kInvalidArgument, std::string(what) + ": row length " + std::to_string(n) +
                                          " is not a multiple of the " + std::string(t.name) +
                                          " block size " + std::to_string(t.block_size));
  }
}

std::string_view TensorTypeName(TensorType type) {
  return GetTensorTypeTraits(type).name;
}

std::optional<TensorType> ParseTensorTypeName(std::string_view name) {
  for (const auto& t : kTable) {
    if (EqualsIgnoreCase(t.name, name)) return t.type;
  }
  return std::nullopt;
}

}  // namespace tandem
