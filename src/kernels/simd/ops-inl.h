// The row ops (ops_isa.h) over a vector trait V (vec_trait.h), for the ISA translation units
// only. Vectors of V::kLanes; the last partial vector of a row goes through the same vector code
// with masked loads/stores, so an element's result never depends on its index. Reductions: fixed
// lane accumulators, combined in a fixed order at the end of the row.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/simd/vec_trait.h"
#include "tensor/float16.h"

namespace tandem::kernels::simd {

// e^x, relative error a few ulp. x < -87 gives 0, x > 88.72 gives +inf; NaN stays NaN.
// x = n·ln2 + r with |r| <= ln2/2; e^r by its Taylor series to degree 7 (truncation < 1e-8).
template <VecTrait V>
inline typename V::V Exp(typename V::V x) {
  const auto too_small = V::Lt(x, V::Set1(-87.0f));
  const auto too_large = V::Gt(x, V::Set1(88.72f));
  x = V::Min(V::Set1(88.0f), V::Max(V::Set1(-87.0f), x));
  const auto n = V::RoundNearest(V::Mul(x, V::Set1(1.44269504088896341f)));
  auto r = V::NegMulAdd(n, V::Set1(0.693145751953125f), x);  // ln2, high bits
  r = V::NegMulAdd(n, V::Set1(1.428606820309417e-6f), r);    // ln2, low bits
  auto p = V::Set1(1.0f / 5040.0f);
  p = V::MulAdd(p, r, V::Set1(1.0f / 720.0f));
  p = V::MulAdd(p, r, V::Set1(1.0f / 120.0f));
  p = V::MulAdd(p, r, V::Set1(1.0f / 24.0f));
  p = V::MulAdd(p, r, V::Set1(1.0f / 6.0f));
  p = V::MulAdd(p, r, V::Set1(0.5f));
  p = V::MulAdd(p, r, V::Set1(1.0f));
  p = V::MulAdd(p, r, V::Set1(1.0f));
  const auto y = V::IfThenZeroElse(too_small, V::MulPow2(p, n));
  return V::IfThenElse(too_large, V::Set1(INFINITY), y);
}

// tanh(u), error a few ulp: odd Taylor polynomial (to u¹¹) for |u| < 0.25, else
// (e - 1)/(e + 1) with e = exp(2|u|); |u| is clamped to 9, where tanh is 1 in f32.
template <VecTrait V>
inline typename V::V Tanh(typename V::V u) {
  const auto a = V::Min(V::Set1(9.0f), V::Abs(u));
  const auto e = Exp<V>(V::Add(a, a));
  const auto one = V::Set1(1.0f);
  const auto big = V::Div(V::Sub(e, one), V::Add(e, one));
  const auto a2 = V::Mul(a, a);
  auto p = V::Set1(-1382.0f / 155925.0f);
  p = V::MulAdd(p, a2, V::Set1(62.0f / 2835.0f));
  p = V::MulAdd(p, a2, V::Set1(-17.0f / 315.0f));
  p = V::MulAdd(p, a2, V::Set1(2.0f / 15.0f));
  p = V::MulAdd(p, a2, V::Set1(-1.0f / 3.0f));
  const auto small = V::MulAdd(V::Mul(p, a2), a, a);
  const auto is_small = V::Lt(a, V::Set1(0.25f));
  return V::CopySignToAbs(V::IfThenElse(is_small, small, big), u);
}

// 0.5·x·(1 + tanh u), u = sqrt(2/π)·(x + 0.044715·x³), as x / (1 + e^(-2u)) (no cancellation).
template <VecTrait V>
inline typename V::V Gelu(typename V::V x) {
  const auto x3 = V::Mul(V::Mul(V::Mul(V::Set1(0.044715f), x), x), x);
  const auto u = V::Mul(V::Set1(0.7978845608028654f), V::Add(x, x3));
  const auto e = Exp<V>(V::Mul(V::Set1(-2.0f), u));
  return V::Div(x, V::Add(V::Set1(1.0f), e));
}

// x·sigmoid(x) as x / (1 + e^(-x)).
template <VecTrait V>
inline typename V::V Silu(typename V::V x) {
  return V::Div(x, V::Add(V::Set1(1.0f), Exp<V>(V::Sub(V::Zero(), x))));
}

// Applies f (one vector -> vector) to x[0..n) -> y, the tail through masked loads/stores.
template <VecTrait V, typename F>
inline void Map(const float* x, int64_t n, float* y, F f) {
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) V::Store(y + i, f(V::Load(x + i)));
  if (i < n) {
    const auto mask = V::FirstN(n - i);
    V::MaskStore(mask, y + i, f(V::MaskLoad(mask, x + i)));
  }
}

template <VecTrait V>
void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y) {
  constexpr int64_t kL = V::kLanes;
  auto acc0 = V::Zero(), acc1 = V::Zero(), acc2 = V::Zero(), acc3 = V::Zero();
  int64_t i = 0;
  for (; i + 4 * kL <= n; i += 4 * kL) {
    const auto v0 = V::Load(x + i), v1 = V::Load(x + i + kL);
    const auto v2 = V::Load(x + i + 2 * kL), v3 = V::Load(x + i + 3 * kL);
    acc0 = V::MulAdd(v0, v0, acc0);
    acc1 = V::MulAdd(v1, v1, acc1);
    acc2 = V::MulAdd(v2, v2, acc2);
    acc3 = V::MulAdd(v3, v3, acc3);
  }
  for (; i + kL <= n; i += kL) {
    const auto v = V::Load(x + i);
    acc0 = V::MulAdd(v, v, acc0);
  }
  if (i < n) {
    const auto v = V::MaskLoad(V::FirstN(n - i), x + i);
    acc0 = V::MulAdd(v, v, acc0);
  }
  const float sum = V::ReduceSum(V::Add(V::Add(acc0, acc1), V::Add(acc2, acc3)));
  const float mean = n > 0 ? sum / static_cast<float>(n) : 0.0f;
  const auto scale = V::Set1(1.0f / std::sqrt(mean + eps));
  if (weight == nullptr) {
    Map<V>(x, n, y, [&](typename V::V v) { return V::Mul(v, scale); });
    return;
  }
  i = 0;
  for (; i + kL <= n; i += kL) {
    const auto v = V::Mul(V::Load(x + i), scale);
    V::Store(y + i, V::Mul(v, V::Load(weight + i)));
  }
  if (i < n) {
    const auto mask = V::FirstN(n - i);
    const auto v = V::Mul(V::MaskLoad(mask, x + i), scale);
    V::MaskStore(mask, y + i, V::Mul(v, V::MaskLoad(mask, weight + i)));
  }
}

// value / (1 + e^(-gate)): value ⊙ sigmoid(gate).
template <VecTrait V>
void SigmoidGlu(const float* value, const float* gate, int64_t n, float* y) {
  const auto f = [](typename V::V v, typename V::V g) {
    return V::Div(v, V::Add(V::Set1(1.0f), Exp<V>(V::Sub(V::Zero(), g))));
  };
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    V::Store(y + i, f(V::Load(value + i), V::Load(gate + i)));
  }
  if (i < n) {
    const auto mask = V::FirstN(n - i);
    V::MaskStore(mask, y + i, f(V::MaskLoad(mask, value + i), V::MaskLoad(mask, gate + i)));
  }
}

template <VecTrait V>
void GeGlu(const float* gate, const float* up, int64_t n, float* y) {
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    V::Store(y + i, V::Mul(Gelu<V>(V::Load(gate + i)), V::Load(up + i)));
  }
  if (i < n) {
    const auto mask = V::FirstN(n - i);
    const auto g = Gelu<V>(V::MaskLoad(mask, gate + i));
    V::MaskStore(mask, y + i, V::Mul(g, V::MaskLoad(mask, up + i)));
  }
}

template <VecTrait V>
void Softcap(const float* x, float cap, int64_t n, float* y) {
  const auto c = V::Set1(cap);
  const auto inv_c = V::Set1(1.0f / cap);
  Map<V>(x, n, y, [&](typename V::V v) { return V::Mul(c, Tanh<V>(V::Mul(v, inv_c))); });
}

// acc += the lanes of v widened to double (the lower half to acc[0], the upper to acc[1]).
template <VecTrait V>
inline void AccumulateDouble(typename V::V v, typename V::VD acc[2]) {
  acc[0] = V::AddD(acc[0], V::PromoteLower(v));
  acc[1] = V::AddD(acc[1], V::PromoteUpper(v));
}

template <VecTrait V>
void Softmax(const float* x, int64_t n, float* y) {
  const auto neg_inf = V::Set1(-INFINITY);
  auto vmax = neg_inf;
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) vmax = V::Max(vmax, V::Load(x + i));
  if (i < n) vmax = V::Max(vmax, V::MaskLoadOr(neg_inf, V::FirstN(n - i), x + i));
  const auto max = V::Set1(V::ReduceMax(vmax));
  typename V::VD acc[2] = {V::ZeroD(), V::ZeroD()};  // the sum in double: n may be 262144
  i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const auto e = Exp<V>(V::Sub(V::Load(x + i), max));
    V::Store(y + i, e);
    AccumulateDouble<V>(e, acc);
  }
  if (i < n) {
    const auto mask = V::FirstN(n - i);
    const auto e = V::IfThenElseZero(mask, Exp<V>(V::Sub(V::MaskLoad(mask, x + i), max)));
    V::MaskStore(mask, y + i, e);
    AccumulateDouble<V>(e, acc);
  }
  const auto inv_sum = V::Set1(static_cast<float>(1.0 / V::ReduceSumD(V::AddD(acc[0], acc[1]))));
  Map<V>(y, n, y, [&](typename V::V v) { return V::Mul(v, inv_sum); });
}

// y = fp16(x), round to nearest even, as tensor/float16.h's Fp32ToFp16: a vector holding a NaN
// (the instruction keeps its payload, the reference stores the canonical one) and the tail take
// the reference's scalar path.
template <VecTrait V>
void ToHalf(const float* x, int64_t n, uint16_t* y) {
  constexpr unsigned kAll = (1u << V::kLanes) - 1;
  int64_t i = 0;
  for (; i + V::kLanes <= n; i += V::kLanes) {
    const auto v = V::Load(x + i);
    if (V::MaskBits(V::Eq(v, v)) == kAll) {
      V::StoreHalves(v, y + i);
    } else {
      for (int l = 0; l < V::kLanes; ++l) y[i + l] = Fp32ToFp16(x[i + l]);
    }
  }
  for (; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}

}  // namespace tandem::kernels::simd

// Inside an ISA namespace: defines that ISA's row ops (ops_isa.h) from the templates above.
#define TANDEM_SIMD_DEFINE_OPS(V)                                                     \
  void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y) { \
    simd::RmsNorm<V>(x, weight, eps, n, y);                                           \
  }                                                                                   \
  void Gelu(const float* x, int64_t n, float* y) {                                    \
    simd::Map<V>(x, n, y, simd::Gelu<V>);                                             \
  }                                                                                   \
  void GeGlu(const float* gate, const float* up, int64_t n, float* y) {               \
    simd::GeGlu<V>(gate, up, n, y);                                                   \
  }                                                                                   \
  void Silu(const float* x, int64_t n, float* y) {                                    \
    simd::Map<V>(x, n, y, simd::Silu<V>);                                             \
  }                                                                                   \
  void SigmoidGlu(const float* value, const float* gate, int64_t n, float* y) {       \
    simd::SigmoidGlu<V>(value, gate, n, y);                                           \
  }                                                                                   \
  void Softcap(const float* x, float cap, int64_t n, float* y) {                      \
    simd::Softcap<V>(x, cap, n, y);                                                   \
  }                                                                                   \
  void Softmax(const float* x, int64_t n, float* y) {                                 \
    simd::Softmax<V>(x, n, y);                                                        \
  }                                                                                   \
  void Exp(const float* x, int64_t n, float* y) {                                     \
    simd::Map<V>(x, n, y, simd::Exp<V>);                                              \
  }                                                                                   \
  void ToHalf(const float* x, int64_t n, uint16_t* y) {                               \
    simd::ToHalf<V>(x, n, y);                                                         \
  }
