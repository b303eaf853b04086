// Mono float samples from one sample rate to another with Debian's libsoxr at its "high
// quality" setting (SOXR_HQ: 20-bit precision, the setting librosa.load uses by default, so
// audio prepared in Python for transformers usually went through the same resampler). One
// thread and one call for the whole signal, so the result depends only on the input.
#pragma once

#include <span>
#include <vector>

namespace tandem {

// The model's rate: Gemma 4's audio tower reads 16 kHz.
inline constexpr int kAudioModelSampleRate = 16000;

// Returns round(n · to_rate / from_rate) samples (the input itself when the rates are equal).
// Rates must be positive (Error kInvalidArgument); a libsoxr failure is Error(kInternal).
std::vector<float> ResampleAudio(std::span<const float> samples, int from_rate, int to_rate);

}  // namespace tandem
