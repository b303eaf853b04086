#include "media/fft.h"

#include <cmath>
#include <numbers>
#include <string>
#include <utility>

#include "base/error.h"

namespace tandem {

Fft::Fft(int size) : size_(size) {
  if (size < 2 || (size & (size - 1)) != 0) {
    Fail(ErrorKind::kInvalidArgument,
         "FFT size " + std::to_string(size) + " is not a power of two of at least 2");
  }
  twiddles_.resize(size_t(size / 2));
  for (int k = 0; k < size / 2; ++k) {
    const double angle = -2.0 * std::numbers::pi * k / size;
    twiddles_[size_t(k)] = {std::cos(angle), std::sin(angle)};
  }
  int bits = 0;
  while ((1 << bits) < size) ++bits;
  reversed_.resize(size_t(size));
  for (int i = 0; i < size; ++i) {
    int r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    reversed_[size_t(i)] = r;
  }
}

void Fft::Forward(std::span<std::complex<double>> data) const {
  if (int(data.size()) != size_) {
    Fail(ErrorKind::kInternal,
         "FFT of " + std::to_string(data.size()) + " values, planned for " + std::to_string(size_));
  }
  for (int i = 0; i < size_; ++i) {
    const int r = reversed_[size_t(i)];
    if (i < r) std::swap(data[size_t(i)], data[size_t(r)]);
  }
  // Decimation in time: butterflies of span `half`, twiddle stride size/(2·half).
  for (int half = 1; half < size_; half *= 2) {
    const int stride = size_ / (2 * half);
    for (int start = 0; start < size_; start += 2 * half) {
      for (int j = 0; j < half; ++j) {
        const std::complex<double> w = twiddles_[size_t(j * stride)];
        std::complex<double>& a = data[size_t(start + j)];
        std::complex<double>& b = data[size_t(start + j + half)];
        // (w · b) written out, so the arithmetic is the plain four products and two sums.
        const double re = w.real() * b.real() - w.imag() * b.imag();
        const double im = w.real() * b.imag() + w.imag() * b.real();
        b = {a.real() - re, a.imag() - im};
        a = {a.real() + re, a.imag() + im};
      }
    }
  }
}

void Fft::RealMagnitudes(std::span<const double> input, std::span<double> magnitudes,
                         std::vector<std::complex<double>>& scratch) const {
  if (int(input.size()) != size_ || int(magnitudes.size()) != size_ / 2 + 1) {
    Fail(ErrorKind::kInternal,
         "real FFT buffers do not match the planned size " + std::to_string(size_));
  }
  scratch.resize(size_t(size_));
  for (int i = 0; i < size_; ++i) scratch[size_t(i)] = {input[size_t(i)], 0.0};
  Forward(scratch);
  for (int k = 0; k <= size_ / 2; ++k) {
    magnitudes[size_t(k)] = std::hypot(scratch[size_t(k)].real(), scratch[size_t(k)].imag());
  }
}

}  // namespace tandem
