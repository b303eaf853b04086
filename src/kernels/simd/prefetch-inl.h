// Prefetch for the matmul micro-kernels (matmul_kernel.h's PrefetchPlan), for the ISA
// translation units only. A template over the trait like everything in simd/, so each ISA's copy
// is its own symbol.
#pragma once

#include <xmmintrin.h>

#include <cstdint>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::simd {

// Issues block b's share of the tile's prefetch region (into L2).
template <VecTrait V>
inline void PrefetchBlock(const PrefetchPlan& plan, int64_t b) {
  for (int64_t l = b * plan.per_block; l < (b + 1) * plan.per_block && l < plan.lines; ++l) {
    _mm_prefetch(reinterpret_cast<const char*>(plan.base + 64 * l), _MM_HINT_T1);
  }
}

}  // namespace tandem::kernels::simd
