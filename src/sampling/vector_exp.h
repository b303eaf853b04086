// e^x for whole rows of floats, four at a time (float4.h): the sampler's softmax over a full
// 262,144-token vocabulary spent most of its time in scalar expf calls.
//
// Method: x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2 (ln2 split in a high part
// with 16 significant bits, so n * ln2_hi is exact, and a low part: Cody and Waite's reduction);
// e^r by its Taylor series to r^7 (truncation error below 6e-9 relative, under 0.05 ulp),
// evaluated by Horner's rule; then times 2^n, as two powers of two so that results down to the
// subnormal range round once. Within 1 ulp of e^x rounded from double precision for every float
// in [-87, 88.7] (checked exhaustively once; the test samples the range and the subnormal
// results); exactly 1 at 0, 0 for x < -104 (and -inf), +inf above 88.72. Whichever
// lane an element takes, the same bits; and the same on every x86-64 machine in the default build
// (baseline SSE2: no multiply-add is contracted into an FMA).
#pragma once

#include <cstddef>
#include <cstring>

#include "sampling/float4.h"

namespace tandem::sampling {

namespace exp_detail {

using namespace simd4;

inline F4 PowerOfTwo(I4 n) {  // 2^n for n in [-126, 127]
  const I4 bits = (n + 127) << 23;
  F4 f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline F4 Exp4(F4 x) {
  const F4 zero_below = Splat(-104.0f), inf_above = Splat(88.72284f);
  const I4 underflow = x < zero_below;
  const I4 overflow = x > inf_above;
  F4 c = x;
  c = c < zero_below ? zero_below : c;  // also maps -inf (and keeps NaN out of the integer part)
  c = c > inf_above ? inf_above : c;
  c = c == c ? c : Splat(0.0f);
  // n = round-to-nearest-even(c / ln2) through the 1.5 * 2^23 shifter.
  const F4 shifter = Splat(12582912.0f);
  const F4 nf = (c * Splat(1.44269504088896341f) + shifter) - shifter;
  const F4 r = (c - nf * Splat(0.693145751953125f)) - nf * Splat(1.42860682030941723212e-6f);
  F4 p = Splat(1.0f / 5040.0f);
  p = p * r + Splat(1.0f / 720.0f);
  p = p * r + Splat(1.0f / 120.0f);
  p = p * r + Splat(1.0f / 24.0f);
  p = p * r + Splat(1.0f / 6.0f);
  p = p * r + Splat(0.5f);
  p = p * r + Splat(1.0f);
  p = p * r + Splat(1.0f);
  const I4 n = __builtin_convertvector(nf, I4);  // in [-150, 128]
  const I4 half = n >> 1;
  F4 y = p * PowerOfTwo(half) * PowerOfTwo(n - half);
  y = underflow ? Splat(0.0f) : y;
  y = overflow ? Splat(__builtin_inff()) : y;
  return x == x ? y : x;  // NaN in, NaN out
}

}  // namespace exp_detail

// y[i] = e^((x[i] - offset) / divisor) for i < n (y may be x; the difference, then the
// quotient, rounded to float first as in scalar code).
inline void ExpRow(const float* x, size_t n, float offset, float divisor, float* y) {
  using exp_detail::F4;
  const F4 o = exp_detail::Splat(offset), d = exp_detail::Splat(divisor);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const F4 v = exp_detail::Exp4((exp_detail::Load(x + i) - o) / d);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) {
    F4 v = exp_detail::Splat(0.0f);
    std::memcpy(&v, x + i, (n - i) * sizeof(float));
    v = exp_detail::Exp4((v - o) / d);
    std::memcpy(y + i, &v, (n - i) * sizeof(float));
  }
}

// e^x, the same bits as ExpRow gives for x (offset 0, divisor 1).
inline float Exp(float x) {
  return exp_detail::Exp4(exp_detail::Splat(x))[0];
}

}  // namespace tandem::sampling
