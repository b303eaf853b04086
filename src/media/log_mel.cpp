#include "media/log_mel.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>

#include "media/fft.h"

namespace tandem {
namespace {

constexpr int kFftBins = kMelFftSize / 2 + 1;
constexpr int kSampleRate = 16000;
constexpr double kMinFrequency = 0.0;
constexpr double kMaxFrequency = 8000.0;

double HertzToMel(double hertz) {
  return 2595.0 * std::log10(1.0 + hertz / 700.0);
}
double MelToHertz(double mel) {
  return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
}

std::vector<double> BuildFilterBank() {
  // Band edges equally spaced in mel (as np.linspace computes them: start + i·step, the last
  // one exactly the end), converted back to Hz; the FFT bins at k · (sample_rate/2) / 256 Hz.
  const double mel_min = HertzToMel(kMinFrequency);
  const double mel_max = HertzToMel(kMaxFrequency);
  const int edges = kMelBins + 2;
  const double step = (mel_max - mel_min) / (edges - 1);
  std::vector<double> edge_hz(static_cast<size_t>(edges));
  for (int i = 0; i < edges; ++i) {
    edge_hz[size_t(i)] = MelToHertz(i == edges - 1 ? mel_max : mel_min + i * step);
  }
  const double bin_step = double(kSampleRate / 2) / (kFftBins - 1);
  std::vector<double> bank(size_t(kFftBins) * kMelBins, 0.0);
  for (int k = 0; k < kFftBins; ++k) {
    const double hz = (k == kFftBins - 1) ? double(kSampleRate / 2) : k * bin_step;
    for (int m = 0; m < kMelBins; ++m) {
      const double lower = edge_hz[size_t(m)];
      const double center = edge_hz[size_t(m + 1)];
      const double upper = edge_hz[size_t(m + 2)];
      const double rising = (hz - lower) / (center - lower);
      const double falling = (upper - hz) / (upper - center);
      bank[size_t(k) * kMelBins + size_t(m)] = std::max(0.0, std::min(rising, falling));
    }
  }
  return bank;
}

// Periodic Hann: w[n] = 0.5 − 0.5·cos(2πn/320).
std::vector<double> BuildWindow() {
  std::vector<double> window(kMelFrameLength);
  for (int n = 0; n < kMelFrameLength; ++n) {
    window[size_t(n)] = 0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * n / kMelFrameLength);
  }
  return window;
}

}  // namespace

int LogMelFrameCount(size_t samples) {
  constexpr size_t kSpan = kMelFrameLength / 2 + 1;  // the first frame's real samples
  if (samples < kSpan) return 0;
  return int((samples - kSpan) / kMelHop + 1);
}

const std::vector<double>& MelFilterBank() {
  static const std::vector<double> bank = BuildFilterBank();
  return bank;
}

LogMel ComputeLogMel(std::span<const float> samples, MelLogFloor floor) {
  static const std::vector<double> window = BuildWindow();
  static const Fft fft(kMelFftSize);
  const std::vector<double>& bank = MelFilterBank();
  // The first and one-past-last FFT bin of each filter with a non-zero weight: the sums skip
  // the zeros, which changes nothing (adding +0 is exact) but a third of the work.
  static const std::vector<std::pair<int, int>> spans = [&bank] {
    std::vector<std::pair<int, int>> result(kMelBins, {0, 0});
    for (int m = 0; m < kMelBins; ++m) {
      int first = kFftBins, last = 0;
      for (int k = 0; k < kFftBins; ++k) {
        if (bank[size_t(k) * kMelBins + size_t(m)] != 0.0) {
          first = std::min(first, k);
          last = k + 1;
        }
      }
      result[size_t(m)] = {first, std::max(first, last)};
    }
    return result;
  }();

  LogMel out;
  out.frames = LogMelFrameCount(samples.size());
  out.values.resize(size_t(out.frames) * kMelBins);
  constexpr int kPad = kMelFrameLength / 2;
  std::vector<double> frame(kMelFftSize, 0.0);
  std::vector<double> magnitudes(kFftBins);
  std::vector<std::complex<double>> scratch;
  for (int f = 0; f < out.frames; ++f) {
    // Sample n of frame f is padded[f·hop + n], where padded = 160 zeros, then the samples.
    for (int n = 0; n < kMelFrameLength; ++n) {
      const long index = long(f) * kMelHop + n - kPad;
      const double x = index < 0 ? 0.0 : double(samples[size_t(index)]);
      frame[size_t(n)] = x * window[size_t(n)];
    }
    fft.RealMagnitudes(frame, magnitudes, scratch);
    float* row = out.values.data() + size_t(f) * kMelBins;
    for (int m = 0; m < kMelBins; ++m) {
      double mel = 0.0;
      for (int k = spans[size_t(m)].first; k < spans[size_t(m)].second; ++k) {
        mel += magnitudes[size_t(k)] * bank[size_t(k) * kMelBins + size_t(m)];
      }
      const double floored =
          floor == MelLogFloor::kAdd ? mel + kMelLogFloor : std::max(mel, kMelLogFloor);
      row[m] = static_cast<float>(std::log(floored));
    }
  }
  return out;
}

}  // namespace tandem
