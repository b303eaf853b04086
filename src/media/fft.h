// A radix-2 fast Fourier transform in double precision for power-of-two sizes, written for the
// audio front end's 512-point frames. The butterflies run in one fixed order and the twiddle
// factors are computed once, so the result for a given input never varies.
#pragma once

#include <complex>
#include <span>
#include <vector>

namespace tandem {

class Fft {
 public:
  // `size` must be a power of two, at least 2 (Error kInvalidArgument otherwise).
  explicit Fft(int size);

  int size() const { return size_; }

  // In place: X[k] = sum_n x[n] · exp(-2πi·k·n/size), unscaled (NumPy's np.fft.fft).
  void Forward(std::span<std::complex<double>> data) const;

  // |X[k]| for k = 0 .. size/2 of the real input `input` (size values; NumPy's
  // np.abs(np.fft.rfft(input))). `scratch` is resized to `size`.
  void RealMagnitudes(std::span<const double> input, std::span<double> magnitudes,
                      std::vector<std::complex<double>>& scratch) const;

 private:
  int size_;
  std::vector<std::complex<double>> twiddles_;  // exp(-2πi·k/size), k < size/2
  std::vector<int> reversed_;                   // bit-reversal permutation
};

}  // namespace tandem
