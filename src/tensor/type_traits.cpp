#include "tensor/type_traits.h"

#include <array>
#include <cctype>

#include "base/error.h"
#include "tensor/formats/float_types.h"
#include "tensor/formats/iq4.h"
#include "tensor/formats/kquant.h"
#include "tensor/formats/legacy.h"
#include "tensor/formats/mxfp4.h"

namespace tandem {
namespace {

using T = TensorType;

using formats::TypeEntry;

// A type with a codec (tensor/formats/) is one TypeEntry, from its line of TANDEM_CODEC_TYPES:
// its block sizes and row loops come from the codec. The activation formats have codecs but no
// line (they are not weights), and a type without a codec is listed with its sizes only, so
// files holding it can still be read and skipped.
#define TANDEM_TYPE_ENTRY(Name, name) TypeEntry<formats::Name>(name),
constexpr auto kTable = std::to_array<TensorTypeTraits>({
    TypeEntry<formats::Q8_1>("q8_1", /*decodable=*/false),  // activation format
    TypeEntry<formats::Q8_K>("q8_K", /*decodable=*/false),  // activation format
    {T::kIQ2_XXS, "iq2_xxs", 256, 66, false, {}},
    {T::kIQ2_XS, "iq2_xs", 256, 74, false, {}},
    {T::kIQ3_XXS, "iq3_xxs", 256, 98, false, {}},
    {T::kIQ1_S, "iq1_s", 256, 50, false, {}},
    {T::kIQ3_S, "iq3_s", 256, 110, false, {}},
    {T::kIQ2_S, "iq2_s", 256, 82, false, {}},
    {T::kI8, "i8", 1, 1, false, {}},
    {T::kI16, "i16", 1, 2, false, {}},
    {T::kI32, "i32", 1, 4, false, {}},
    {T::kI64, "i64", 1, 8, false, {}},
    {T::kF64, "f64", 1, 8, false, {}},
    {T::kIQ1_M, "iq1_m", 256, 56, false, {}},
    {T::kTQ1_0, "tq1_0", 256, 54, false, {}},
    {T::kTQ2_0, "tq2_0", 256, 66, false, {}},
    {T::kNVFP4, "nvfp4", 64, 36, false, {}},
    {T::kQ1_0, "q1_0", 128, 18, false, {}},
    {T::kQ2_0, "q2_0", 64, 18, false, {}},
    // clang-format off
    TANDEM_CODEC_TYPES(TANDEM_TYPE_ENTRY)
    // clang-format on
});
#undef TANDEM_TYPE_ENTRY

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
