// Four floats as one SSE2 vector (GCC/Clang vector extensions: arithmetic, comparisons giving
// all-ones int lanes, `mask ? a : b` selects), the x86-64 baseline this folder is built for.
// vocab_scan.h and vector_exp.h are written over it.
#pragma once

#include <cstring>

namespace tandem::sampling::simd4 {

using F4 = float __attribute__((vector_size(16)));
using I4 = int __attribute__((vector_size(16)));

inline F4 Splat(float v) {
  return F4{v, v, v, v};
}

// Four floats from p, any alignment.
inline F4 Load(const float* p) {
  F4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline bool AnyLane(I4 mask) {
  return (mask[0] | mask[1] | mask[2] | mask[3]) != 0;
}

}  // namespace tandem::sampling::simd4
