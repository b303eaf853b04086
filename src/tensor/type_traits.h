// The one table of ggml tensor types: id, name, block size, bytes per block, and the row loops
// of the type's codec (tensor/formats/) where tandem has one (docs/formats.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tandem {

// Numbering is ggml's `ggml_type`, as stored in GGUF tensor infos. Removed ids have no entry.
enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  kNVFP4 = 40,
  kQ1_0 = 41,
  kQ2_0 = 42,
};

inline constexpr uint32_t kTensorTypeIdLimit = 43;  // ids >= this are unknown

// A type's row loops from its codec; null where tandem cannot do that with the type.
struct RowCodec {
  void (*decode)(const void* src, float* dst, int64_t blocks) = nullptr;  // blocks -> f32
  void (*encode)(const float* src, void* dst, int64_t blocks) = nullptr;  // f32 -> blocks
};

// The weight types with a codec (tensor/formats/), one line each: X(Name, "ggml name"). The line
// is what makes a codec a type: the type table, dequantization, quantization (tandem quantize)
// and the scalar matmul (kernels/ref, for a codec whose kDot names an activation format) follow
// from it. Vector kernels list the types that deserve them (kernels/matmul_kernel.h).
// clang-format off
#define TANDEM_CODEC_TYPES(X)                                                                    \
  X(F32, "f32") X(F16, "f16") X(BF16, "bf16")                                                    \
  X(Q4_0, "q4_0") X(Q4_1, "q4_1") X(Q5_0, "q5_0") X(Q5_1, "q5_1") X(Q8_0, "q8_0")                \
  X(Q2_K, "q2_K") X(Q3_K, "q3_K") X(Q4_K, "q4_K") X(Q5_K, "q5_K") X(Q6_K, "q6_K")                \
  X(IQ4_NL, "iq4_nl") X(IQ4_XS, "iq4_xs") X(MXFP4, "mxfp4")
// clang-format on

struct TensorTypeTraits {
  TensorType type;
  std::string_view name;  // ggml's type_name, e.g. "q4_K"
  uint32_t block_size;    // values per block
  uint32_t block_bytes;   // sizeof(block)
  bool dequantizable;     // tandem can turn it into f32 (codec.decode is set)
  RowCodec codec;
};

// Traits for a raw id from a file; nullopt for unknown or removed ids.
std::optional<TensorTypeTraits> FindTensorTypeTraits(uint32_t id);
// Traits for a valid type (never fails).
const TensorTypeTraits& GetTensorTypeTraits(TensorType type);
std::string_view TensorTypeName(TensorType type);
// Case-insensitive lookup by ggml name ("q8_0", "Q4_K", "bf16").
std::optional<TensorType> ParseTensorTypeName(std::string_view name);

// Bytes of one row of `n` values; `n` must be a multiple of the block size.
inline size_t RowBytes(const TensorTypeTraits& t, uint64_t n) {
  return static_cast<size_t>(n / t.block_size) * t.block_bytes;
}

// Throws Error(kInvalidArgument) unless `n` is a non-negative multiple of the block size of
// `type`; `what` names the caller in the message (e.g. "DequantizeRow").
void CheckRowLength(TensorType type, int64_t n, const char* what);

}  // namespace tandem
