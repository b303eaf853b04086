// The activation quantizers for MatMul (matmul_kernel.h's QuantizeRowFn) over a vector trait V
// (vec_trait.h), for the ISA translation units only. Bit-exact with tensor/quantize.h's
// reference ones for finite inputs on every vector width: Q8_0/Q8_1: roundf of x / (amax / 127);
// Q8_K: nearest-even of x * (-127 / signed max), the first element of largest magnitude giving
// the sign. (Maxima and integer sums are exact, so their order does not matter.)
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::simd {

// f32 -> fp16 (round to nearest even) -> f32: the value a stored fp16 field holds.
template <VecTrait V>
inline float ThroughFp16(float v) {
  return V::HalfToFloat(V::FloatToHalf(v));
}

// roundf: round half away from zero, exactly (the fraction v - trunc(v) is exact).
template <VecTrait V>
inline typename V::V RoundHalfAway(typename V::V v) {
  const auto t = V::Trunc(v);
  const auto up = V::Ge(V::Abs(V::Sub(v, t)), V::Set1(0.5f));
  return V::AddIf(up, t, V::CopySignToAbs(V::Set1(1.0f), v));
}

// Stores the 16 codes (in -128..127) of codes[0, kPer16) as bytes; returns their sum.
template <VecTrait V>
inline int32_t StoreCodes16(const typename V::VI* codes, int8_t* out) {
  V::StoreI8x16(codes, out);
  auto sum = codes[0];
  for (int k = 1; k < V::kPer16; ++k) sum = V::AddI32(sum, codes[k]);
  return V::ReduceSumI32(sum);
}

// Q8_0 (and with kSum, Q8_1) blocks of 32.
template <VecTrait V, bool kSum>
void QuantizeQ8(const float* x, int64_t cols, const QuantizedRow& out) {
  constexpr int kVectors = 32 / V::kLanes;
  for (int64_t b = 0; b < cols / 32; ++b) {
    typename V::V v[kVectors];
    for (int i = 0; i < kVectors; ++i) v[i] = V::Load(x + 32 * b + V::kLanes * i);
    auto amax_v = V::Abs(v[0]);
    for (int i = 1; i < kVectors; ++i) amax_v = V::Max(amax_v, V::Abs(v[i]));
    const float amax = V::ReduceMax(amax_v);
    const float d = amax / 127;
    const auto id = V::Set1(d != 0 ? 1.0f / d : 0.0f);
    const auto lo = V::Set1(-128.0f), hi = V::Set1(127.0f);
    typename V::VI q[kVectors];
    for (int i = 0; i < kVectors; ++i) {
      const auto r = RoundHalfAway<V>(V::Mul(v[i], id));
      q[i] = V::ConvertTrunc(V::Min(V::Max(r, lo), hi));
    }
    const int32_t s0 = StoreCodes16<V>(q, out.qs + 32 * b);
    const int32_t s1 = StoreCodes16<V>(q + V::kPer16, out.qs + 32 * b + 16);
    out.sum16[2 * b] = s0;
    out.sum16[2 * b + 1] = s1;
    out.sum32[b] = s0 + s1;
    out.d[b] = ThroughFp16<V>(d);
    if constexpr (kSum) out.s[b] = ThroughFp16<V>(static_cast<float>(s0 + s1) * d);
  }
}

template <VecTrait V>
void QuantizeQ8K(const float* x, int64_t cols, const QuantizedRow& out) {
  constexpr int kVectors = 256 / V::kLanes;
  for (int64_t b = 0; b < cols / 256; ++b) {
    const float* xb = x + 256 * b;
    auto amax_v = V::Zero();
    for (int i = 0; i < kVectors; ++i) amax_v = V::Max(amax_v, V::Abs(V::Load(xb + V::kLanes * i)));
    const float amax = V::ReduceMax(amax_v);
    int8_t* qs = out.qs + 256 * b;
    if (!(amax > 0)) {
      std::memset(qs, 0, 256);
      for (int k = 0; k < 16; ++k) out.sum16[16 * b + k] = 0;
      for (int j = 0; j < 8; ++j) out.sum32[8 * b + j] = 0;
      out.d[b] = 0.0f;
      continue;
    }
    float max = amax;  // the first element of largest magnitude gives the sign
    for (int i = 0; i < kVectors; ++i) {
      const unsigned m = V::MaskBits(V::Eq(V::Abs(V::Load(xb + V::kLanes * i)), V::Set1(amax)));
      if (m != 0) {
        max = xb[V::kLanes * i + __builtin_ctz(m)];
        break;
      }
    }
    const float iscale = -127.f / max;
    const auto scale = V::Set1(iscale);
    for (int k = 0; k < 16; ++k) {
      typename V::VI q[V::kPer16];
      for (int h = 0; h < V::kPer16; ++h) {
        // Round to nearest even (the default MXCSR mode), as ggml's nearest_int.
        q[h] =
            V::MinI32(V::ConvertNearest(V::Mul(V::Load(xb + 16 * k + V::kLanes * h), scale)), 127);
      }
      out.sum16[16 * b + k] = StoreCodes16<V>(q, qs + 16 * k);
    }
    for (int j = 0; j < 8; ++j) {
      out.sum32[8 * b + j] = out.sum16[16 * b + 2 * j] + out.sum16[16 * b + 2 * j + 1];
    }
    out.d[b] = 1 / iscale;
  }
}

}  // namespace tandem::kernels::simd

// Inside an ISA namespace: defines that ISA's activation quantizers (matmul_kernel.h).
#define TANDEM_SIMD_DEFINE_ACTIVATION_QUANTIZERS(V)                                     \
  void QuantizeActivationsQ8_0(const float* x, int64_t cols, const QuantizedRow& out) { \
    simd::QuantizeQ8<V, false>(x, cols, out);                                           \
  }                                                                                     \
  void QuantizeActivationsQ8_1(const float* x, int64_t cols, const QuantizedRow& out) { \
    simd::QuantizeQ8<V, true>(x, cols, out);                                            \
  }                                                                                     \
  void QuantizeActivationsQ8_K(const float* x, int64_t cols, const QuantizedRow& out) { \
    simd::QuantizeQ8K<V>(x, cols, out);                                                 \
  }
