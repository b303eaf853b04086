// Test helpers for the sampling tests: Pearson's chi-square statistic and its critical values.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace tandem::sampling_test {

// Chi-square critical values at significance 1e-6 (P(X > value) = 1e-6) by degrees of freedom,
// computed from the regularised upper incomplete gamma function. A correct sampler passes a
// fixed seed set with overwhelming margin; a biased one (e.g. an off-by-one in the CDF) exceeds
// these by orders of magnitude at the sample sizes used.
inline double ChiSquareCritical1e6(int degrees_of_freedom) {
  static constexpr double kTable[] = {0.0,   23.93, 27.63, 30.66, 33.38, 35.89,
                                      38.26, 40.52, 42.70, 44.81, 46.86};
  return kTable[degrees_of_freedom];
}

// Pearson's statistic of `counts` (n draws in total) against `probs` (normalised) over the bins
// with probs > 0. A draw in a zero-probability bin makes the statistic infinite.
inline double ChiSquare(const std::vector<int64_t>& counts, std::span<const float> probs,
                        int64_t n) {
  double chi = 0.0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] == 0.0f) {
      if (counts[i] != 0) return INFINITY;
      continue;
    }
    const double expected = static_cast<double>(probs[i]) * static_cast<double>(n);
    const double diff = static_cast<double>(counts[i]) - expected;
    chi += diff * diff / expected;
  }
  return chi;
}

// Degrees of freedom of a test over `probs`: the number of non-zero bins minus one.
inline int DegreesOfFreedom(std::span<const float> probs) {
  int bins = 0;
  for (float p : probs) bins += p > 0.0f;
  return bins - 1;
}

}  // namespace tandem::sampling_test
