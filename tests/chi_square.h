// Chi-square goodness of fit for the lossless-sampling suites: observed token counts against the
// exact expected counts computed from the target.
#pragma once

#include <cmath>
#include <vector>

namespace tandem {

struct ChiSquareFit {
  double chi2 = 0;
  int bins = 0;
  double z = 0;              // Wilson–Hilferty normal approximation of the upper tail
  int impossible_seen = -1;  // first token observed although its expected count is 0, or -1
};

// Bins tokens in id order until each bin expects >= 5 (the last bin takes the remainder).
inline ChiSquareFit FitChiSquare(const std::vector<double>& expected,
                                 const std::vector<int>& observed) {
  ChiSquareFit fit;
  double e_bin = 0, o_bin = 0;
  for (size_t t = 0; t < expected.size(); ++t) {
    if (expected[t] == 0) {
      if (observed[t] != 0 && fit.impossible_seen < 0) fit.impossible_seen = static_cast<int>(t);
      continue;
    }
    e_bin += expected[t];
    o_bin += observed[t];
    if (e_bin >= 5) {
      fit.chi2 += (o_bin - e_bin) * (o_bin - e_bin) / e_bin;
      ++fit.bins;
      e_bin = o_bin = 0;
    }
  }
  if (e_bin > 0) fit.chi2 += (o_bin - e_bin) * (o_bin - e_bin) / e_bin, ++fit.bins;
  if (fit.bins > 1) {
    const double k = fit.bins - 1, m = 1.0 - 2.0 / (9.0 * k), s = std::sqrt(2.0 / (9.0 * k));
    fit.z = (std::cbrt(fit.chi2 / k) - m) / s;
  }
  return fit;
}

}  // namespace tandem
