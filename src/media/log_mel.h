// The log-mel spectrogram Gemma 4's audio tower reads (transformers' Gemma4AudioFeatureExtractor,
// restated in docs/media.md § Log-mel features): 16 kHz mono samples, 160 zeros in front, frames
// of 320 samples every 160 under a periodic Hann window, a 512-point FFT's magnitudes, 128
// triangular HTK-mel filters over 0..8000 Hz, and the natural log with a floor of 0.001.
// Only frames that lie wholly inside the padded signal and end on a real sample are returned
// (the ones transformers' mask keeps). Computed in double, stored as float.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tandem {

inline constexpr int kMelBins = 128;
inline constexpr int kMelFrameLength = 320;  // 20 ms at 16 kHz
inline constexpr int kMelHop = 160;          // 10 ms
inline constexpr int kMelFftSize = 512;
inline constexpr double kMelLogFloor = 1e-3;

// How the log is kept finite where a filter's energy is near zero.
enum class MelLogFloor {
  kAdd,    // ln(mel + 0.001): transformers
  kClamp,  // ln(max(mel, 0.001)): llama.cpp
};

// The log-mel rows of one clip: frames × kMelBins floats, frame-major.
struct LogMel {
  int frames = 0;
  std::vector<float> values;

  std::span<const float> row(int frame) const {
    return std::span<const float>(values).subspan(size_t(frame) * kMelBins, kMelBins);
  }
};

// floor((n − 161) / 160) + 1 for n ≥ 161 samples, else 0.
int LogMelFrameCount(size_t samples);

// The filter bank, (kMelFftSize/2 + 1) × kMelBins, bin-major: transformers' mel_filter_bank with
// HTK mel scale and no normalisation.
const std::vector<double>& MelFilterBank();

LogMel ComputeLogMel(std::span<const float> samples, MelLogFloor floor = MelLogFloor::kAdd);

}  // namespace tandem
