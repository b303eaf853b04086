// Test helpers: recordings made in the test. A WAV writer by hand (independent of libsndfile),
// WAV, FLAC, Ogg/Vorbis and MP3 files written by libsndfile's own encoders, and deterministic
// test signals.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tandem::testing_media {

// A canonical 44-byte-header PCM WAV of 16-bit samples (interleaved), written byte by byte.
std::vector<uint8_t> WavPcm16(std::span<const int16_t> interleaved, int channels, int sample_rate);

enum class AudioEncoding {
  kWavPcm16,
  kWavPcm24,
  kWavPcm32,
  kWavFloat,
  kFlac16,
  kOggVorbis,
  kOggOpus,
  kMp3
};

const char* AudioEncodingName(AudioEncoding encoding);

// Whether this libsndfile can write `encoding` (MP3 needs a libsndfile built with LAME).
bool CanEncodeAudio(AudioEncoding encoding);

// `interleaved` samples in [-1, 1] as a file, through libsndfile's writer (sf_open_virtual).
std::vector<uint8_t> EncodeAudio(std::span<const float> interleaved, int channels, int sample_rate,
                                 AudioEncoding encoding);

// `count` samples of a sum of sines (frequencies in Hz, equal amplitudes summing to
// `amplitude`) with a slow amplitude swell and seeded low-level noise, so every mel band and
// every frame differs.
std::vector<float> MakeTestSignal(size_t count, int sample_rate, std::span<const double> hertz,
                                  double amplitude, uint32_t seed);

// Writes `bytes` to `path` (for the NumPy reference); fails the test on error.
void WriteFile(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace tandem::testing_media
