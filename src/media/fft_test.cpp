#include "media/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <random>
#include <vector>

#include "base/error.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

// The DFT by its definition, in long double: the independent truth.
std::vector<std::complex<long double>> NaiveDft(const std::vector<std::complex<double>>& x) {
  const size_t n = x.size();
  std::vector<std::complex<long double>> out(n);
  for (size_t k = 0; k < n; ++k) {
    std::complex<long double> sum = 0;
    for (size_t j = 0; j < n; ++j) {
      const long double angle = -2.0L * std::numbers::pi_v<long double> *
                                static_cast<long double>((k * j) % n) / static_cast<long double>(n);
      sum += std::complex<long double>(x[j]) * std::polar(1.0L, angle);
    }
    out[k] = sum;
  }
  return out;
}

TEST(Fft, MatchesTheDefinitionForEveryPowerOfTwoUpTo1024) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  for (int n = 2; n <= 1024; n *= 2) {
    std::vector<std::complex<double>> x(static_cast<size_t>(n));
    for (auto& v : x) v = {normal(rng), normal(rng)};
    const auto truth = NaiveDft(x);
    Fft fft(n);
    fft.Forward(x);
    for (int k = 0; k < n; ++k) {
      EXPECT_NEAR(x[size_t(k)].real(), double(truth[size_t(k)].real()), 1e-11 * n) << n << " " << k;
      EXPECT_NEAR(x[size_t(k)].imag(), double(truth[size_t(k)].imag()), 1e-11 * n) << n << " " << k;
    }
  }
}

TEST(Fft, RealMagnitudesOfACosineAndAnImpulse) {
  Fft fft(512);
  std::vector<double> input(512), magnitudes(257);
  std::vector<std::complex<double>> scratch;
  // cos(2π·37·n/512): all energy in bin 37, |X| = 256.
  for (int n = 0; n < 512; ++n) input[size_t(n)] = std::cos(2.0 * std::numbers::pi * 37 * n / 512);
  fft.RealMagnitudes(input, magnitudes, scratch);
  for (int k = 0; k <= 256; ++k) {
    EXPECT_NEAR(magnitudes[size_t(k)], k == 37 ? 256.0 : 0.0, 1e-9) << k;
  }
  // An impulse at 5: |X[k]| = 1 everywhere.
  std::fill(input.begin(), input.end(), 0.0);
  input[5] = 1.0;
  fft.RealMagnitudes(input, magnitudes, scratch);
  for (int k = 0; k <= 256; ++k) EXPECT_NEAR(magnitudes[size_t(k)], 1.0, 1e-15) << k;
}

TEST(Fft, RefusesSizesThatAreNotPowersOfTwo) {
  for (int n : {0, 1, 3, 320, 513}) {
    testing_media::ExpectError([n] { Fft fft(n); }, ErrorKind::kInvalidArgument,
                               "not a power of two");
  }
}

}  // namespace
}  // namespace tandem
