// Scans over a vocabulary-sized row (262,144 values for Gemma 4) in 16-value blocks of four
// 4-float vectors (float4.h), so that the per-token sampling work stays a small fraction of a
// decode step. Each returns exactly what the plain element-by-element loop returns.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>

#include "sampling/float4.h"

namespace tandem::sampling {

// Values per block of the scans below.
inline constexpr size_t kScanBlock = 16;

namespace scan_detail {

using namespace simd4;

// Lane-wise: v where v > m, else m (a NaN v never replaces m).
inline F4 Greater(F4 v, F4 m) {
  return v > m ? v : m;
}

}  // namespace scan_detail

// The largest value of x under `>`, NaNs ignored (a NaN never compares greater); -inf if x is
// empty or holds only NaN and -inf.
inline float MaxIgnoringNan(std::span<const float> x) {
  using namespace scan_detail;
  F4 m[4] = {Splat(-INFINITY), Splat(-INFINITY), Splat(-INFINITY), Splat(-INFINITY)};
  size_t i = 0;
  for (; i + kScanBlock <= x.size(); i += kScanBlock) {
    for (int j = 0; j < 4; ++j) m[j] = Greater(Load(&x[i + 4 * j]), m[j]);
  }
  const F4 v = Greater(Greater(m[0], m[1]), Greater(m[2], m[3]));
  float max = -INFINITY;
  for (int j = 0; j < 4; ++j) max = v[j] > max ? v[j] : max;
  for (; i < x.size(); ++i) max = x[i] > max ? x[i] : max;
  return max;
}

// The first index i with x[i] == value (so -0 and +0 match each other), or x.size().
inline size_t FirstEqual(std::span<const float> x, float value) {
  using namespace scan_detail;
  const F4 target = Splat(value);
  size_t i = 0;
  for (; i + kScanBlock <= x.size(); i += kScanBlock) {
    I4 hit = Load(&x[i]) == target;
    for (int j = 1; j < 4; ++j) hit |= Load(&x[i + 4 * j]) == target;
    if (AnyLane(hit)) break;
  }
  for (; i < x.size(); ++i) {
    if (x[i] == value) return i;
  }
  return x.size();
}

// True if every value of x is below +inf (false for a NaN or +inf); with `finite`, also above
// -inf.
inline bool AllBelowInfinity(std::span<const float> x, bool finite = false) {
  using namespace scan_detail;
  const F4 inf = Splat(INFINITY), low = Splat(finite ? -INFINITY : NAN);
  I4 bad = I4{0, 0, 0, 0};
  size_t i = 0;
  for (; i + kScanBlock <= x.size(); i += kScanBlock) {
    for (int j = 0; j < 4; ++j) bad |= ~(Load(&x[i + 4 * j]) < inf) | (Load(&x[i + 4 * j]) == low);
  }
  bool ok = !AnyLane(bad);
  for (; i < x.size(); ++i) ok &= x[i] < INFINITY && !(finite && x[i] == -INFINITY);
  return ok;
}

// True if every value of x[0..kScanBlock) compares equal to zero (+0 or -0).
inline bool BlockIsZero(const float* x) {
  using namespace scan_detail;
  I4 nonzero = Load(x) != Splat(0.0f);
  for (int j = 1; j < 4; ++j) nonzero |= Load(x + 4 * j) != Splat(0.0f);
  return !AnyLane(nonzero);
}

// True if i starts a whole block of x (i a multiple of kScanBlock, kScanBlock values from i on)
// whose values all compare equal to zero: a loop over x may step past it.
inline bool ZeroBlockAt(std::span<const float> x, size_t i) {
  return i % kScanBlock == 0 && i + kScanBlock <= x.size() && BlockIsZero(&x[i]);
}

// True if i starts a whole block of x none of whose values is greater than `bound` (a NaN never
// is): a loop looking for values above `bound` may step past it.
inline bool BlockNotAboveAt(std::span<const float> x, size_t i, float bound) {
  return i % kScanBlock == 0 && i + kScanBlock <= x.size() &&
         !(MaxIgnoringNan(x.subspan(i, kScanBlock)) > bound);
}

// The sum of x in index order, in double, skipping whole blocks of zeros: bitwise the plain
// loop's `total += x[i]` (the running total starts at +0 and never becomes -0, so adding a zero
// never changes it).
inline double SumInOrder(std::span<const float> x) {
  double total = 0.0;
  size_t i = 0;
  for (; i + kScanBlock <= x.size(); i += kScanBlock) {
    if (BlockIsZero(&x[i])) continue;
    for (size_t j = 0; j < kScanBlock; ++j) total += x[i + j];
  }
  for (; i < x.size(); ++i) total += x[i];
  return total;
}

}  // namespace tandem::sampling
