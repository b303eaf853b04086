// What a codec of tensor/formats/ is, and what is built from codecs once for every type: the
// nibble-pair helpers of the 32-value blocks, the reference dot product, the row loops the type
// table (tensor/type_traits.cpp) points at (docs/formats.md).
//
// A codec is a struct F for one ggml type, in the file of its family:
//   using Block;                          the block as stored in a GGUF file
//   static constexpr TensorType kType;
//   static constexpr int kValues;         values per block
//   static void Decode(const Block&, float* y);   y[kValues], ggml's float operations in order
//   static constexpr DotFamily kDot;      which activation format its dot product takes
//   Quantized weight types (kDot != kNone) unpack their layout once (a per-element Weight, or
//   Weights for nibble-pair blocks), used by their Decode and by Unpack, the block's integers;
//   the reference dot (ReferenceDot below) is the family's formula over those:
//     kQ8_0, kQ8_1: static void Unpack(const Block&, int w[32]);
//                   static float Scale(const Block&);  and for kQ8_1 static float Min(...)
//     kQ8_K:        static void Unpack(const Block&, int w[256], int sc[16], int m[16]);
//                   static float Scale(const Block&), Min(const Block&);  kHasMins
//   A type tandem can write gives static void Encode(const float* x, Block* y), bit-exact with
//   ggml's `quantize_row_*_ref`.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tensor/type_traits.h"

namespace tandem {

// ggml's `nearest_int`: round half to even via the 1.5·2^23 trick (valid for |f| <= 2^22 - 1;
// outside that range the result is wrong but defined).
inline int NearestInt(float f) {
  const float v = f + 12582912.0f;
  int32_t i;
  std::memcpy(&i, &v, sizeof i);
  return (i & 0x007FFFFF) - 0x00400000;
}

namespace formats {

// A block as a file stores it: `bytes` long, no padding, copied as bytes.
template <class B>
constexpr bool IsStoredBlock(size_t bytes) {
  return sizeof(B) == bytes && std::is_trivially_copyable_v<B> && std::is_standard_layout_v<B>;
}

// The activation format a weight type's dot product takes, and so its formula
// (kernels/ref/dot_ref.h): kQ8_0: 32-value blocks, acc = fma(d_w * d_a, sum w a, acc) kQ8_1:
// 32-value blocks with a minimum, then acc = fma(m_w, s_a, acc) kQ8_K: 256-value super-blocks with
// 16 sub-scales (and mins) kNone: not a weight type of the matmul (floats, the activation formats
// themselves).
enum class DotFamily { kNone, kQ8_0, kQ8_1, kQ8_K };

// ---- Encoding helpers shared by the families ----

inline constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below this a group is zero

// Signed value of the element with the largest magnitude (the first one on ties), and that
// magnitude, over x[n].
inline void SignedAbsMax(const float* x, int n, float* max, float* amax) {
  *max = 0.0f;
  *amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > *amax) {
      *amax = ax;
      *max = x[i];
    }
  }
}

// ---- 32-value blocks of nibble pairs: qs[j] low nibble = element j, high = element j + 16 ----

// Writes y[32] = value(code, element) for the block's 4-bit codes.
template <typename T, typename Value>
inline void NibblePairs(const uint8_t* qs, T* y, Value value) {
  for (int j = 0; j < 16; ++j) {
    y[j] = value(qs[j] & 0xF, j);
    y[j + 16] = value(qs[j] >> 4, j + 16);
  }
}

// For a codec F of such blocks whose Weights(b) maps (code, element) to the integer weight:
// its Unpack, and its Decode x = w * d (+ m for the kQ8_1 family).
template <class F>
inline void UnpackNibbles(const typename F::Block& b, int w[32]) {
  NibblePairs(b.qs, w, F::Weights(b));
}
template <class F>
inline void DecodeNibbles(const typename F::Block& b, float* y) {
  const float d = F::Scale(b);
  const auto weight = F::Weights(b);
  if constexpr (F::kDot == DotFamily::kQ8_1) {
    const float m = F::Min(b);
    NibblePairs(b.qs, y,
                [d, m, weight](int q, int e) { return static_cast<float>(weight(q, e)) * d + m; });
  } else {
    NibblePairs(b.qs, y,
                [d, weight](int q, int e) { return static_cast<float>(weight(q, e)) * d; });
  }
}

// ---- The reference dot product (the scalar matmul's and the SIMD kernels' oracle) ----

// One row of quantized activations in the matmul's layout (kernels/matmul_kernel.h): the codes
// qs[cols], per-block scales d (fp32 values of the stored scales), Q8_1's s, Q8_K's sums of 16.
struct ActivationRow {
  const int8_t* qs;
  const float* d;
  const float* s;
  const int32_t* sum16;
};

// The dot of `blocks` weight blocks of codec F with one activation row: exact integer sums per
// block, then one fused multiply-add per term, in block order.
template <class F>
inline float ReferenceDot(const typename F::Block* w, const ActivationRow& a, int64_t blocks) {
  static_assert(F::kDot != DotFamily::kNone, "not a weight type of the matmul");
  float acc = 0.0f;
  for (int64_t b = 0; b < blocks; ++b) {
    if constexpr (F::kDot == DotFamily::kQ8_K) {
      int v[256], sc[16], m[16];
      F::Unpack(w[b], v, sc, m);
      int isum = 0, imin = 0;
      for (int k = 0; k < 16; ++k) {
        int sub = 0;
        for (int i = 16 * k; i < 16 * k + 16; ++i) sub += v[i] * a.qs[256 * b + i];
        isum += sc[k] * sub;
        imin += m[k] * a.sum16[16 * b + k];
      }
      acc = std::fma(F::Scale(w[b]) * a.d[b], static_cast<float>(isum), acc);
      if constexpr (F::kHasMins) {
        acc = std::fma(-(F::Min(w[b]) * a.d[b]), static_cast<float>(imin), acc);
      }
    } else {
      int v[32];
      F::Unpack(w[b], v);
      int sumi = 0;
      for (int i = 0; i < 32; ++i) sumi += v[i] * a.qs[32 * b + i];
      acc = std::fma(F::Scale(w[b]) * a.d[b], static_cast<float>(sumi), acc);
      if constexpr (F::kDot == DotFamily::kQ8_1) acc = std::fma(F::Min(w[b]), a.s[b], acc);
    }
  }
  return acc;
}

// ---- Row loops: what the type table points at ----

// A float row is its own bytes: one memcpy.
template <class F>
inline constexpr bool kBytesAreValues = std::is_same_v<typename F::Block, float>;

template <class F>
void DecodeBlocks(const void* src, float* dst, int64_t blocks) {
  if constexpr (kBytesAreValues<F>) {
    if (blocks > 0) std::memcpy(dst, src, static_cast<size_t>(blocks) * sizeof(float));
  } else {
    const auto* b = static_cast<const typename F::Block*>(src);
    for (int64_t i = 0; i < blocks; ++i, dst += F::kValues) F::Decode(b[i], dst);
  }
}

template <class F>
void EncodeBlocks(const float* src, void* dst, int64_t blocks) {
  if constexpr (kBytesAreValues<F>) {
    if (blocks > 0) std::memcpy(dst, src, static_cast<size_t>(blocks) * sizeof(float));
  } else {
    auto* b = static_cast<typename F::Block*>(dst);
    for (int64_t i = 0; i < blocks; ++i, src += F::kValues) F::Encode(src, &b[i]);
  }
}

template <class F>
concept Encodable = requires(const float* x, typename F::Block* y) {
  F::Encode(x, y);
};

// The table entry of a type with a codec: its sizes from the block, its row loops. Activation
// formats (never stored in files) are not decoded through the table (`decodable` false).
template <class F>
constexpr TensorTypeTraits TypeEntry(std::string_view name, bool decodable = true) {
  RowCodec codec;
  if (decodable) codec.decode = DecodeBlocks<F>;
  if constexpr (Encodable<F>) codec.encode = EncodeBlocks<F>;
  return {F::kType, name, F::kValues, sizeof(typename F::Block), decodable, codec};
}

}  // namespace formats
}  // namespace tandem
