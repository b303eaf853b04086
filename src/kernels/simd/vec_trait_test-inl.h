// Tests of a vector trait (vec_trait.h), instantiated by each ISA folder's vec_*_test.cpp with
// that ISA's flags; each test skips where the host cannot run the ISA.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/isa.h"
#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::simd {

// SumEach's lane l has the bits of ReduceSum(vectors[l]): values spread over many magnitudes
// (so the order of the additions shows in the rounding), signed zeros, infinities and NaN.
template <VecTrait V>
void ExpectSumEachMatchesReduceSum(Isa isa) {
  const std::vector<Isa> supported = SupportedIsas();
  if (std::find(supported.begin(), supported.end(), isa) == supported.end()) {
    GTEST_SKIP() << "this CPU cannot run " << IsaName(isa);
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-30, 30);
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            1e38f,
                            -1e38f};
  for (int trial = 0; trial < 2000; ++trial) {
    alignas(64) float values[V::kLanes][V::kLanes];
    for (auto& row : values) {
      for (float& x : row) {
        x = std::ldexp(mantissa(rng), exponent(rng));
        if (trial % 4 == 3 && rng() % 8 == 0) x = specials[rng() % std::size(specials)];
      }
    }
    typename V::V vectors[V::kLanes];
    for (int l = 0; l < V::kLanes; ++l) vectors[l] = V::Load(values[l]);
    alignas(64) float sums[V::kLanes];
    V::Store(sums, V::SumEach(vectors));
    for (int l = 0; l < V::kLanes; ++l) {
      const float want = V::ReduceSum(vectors[l]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(sums[l])) << "trial " << trial << " lane " << l;
      } else {
        EXPECT_EQ(std::bit_cast<uint32_t>(sums[l]), std::bit_cast<uint32_t>(want))
            << "trial " << trial << " lane " << l << ": " << sums[l] << " vs " << want;
      }
    }
  }
}

}  // namespace tandem::kernels::simd
