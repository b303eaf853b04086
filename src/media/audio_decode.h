// Audio bytes (WAV, FLAC, Ogg/Vorbis or Opus, MP3) to mono float samples at the file's own rate,
// with Debian's libsndfile reading from memory. docs/media.md § Audio has the details:
//  - integer PCM is scaled to [-1, 1) (a 16-bit sample s becomes s / 32768); float WAV samples
//    pass through as stored and must be finite and within +-kMaxAudioSampleMagnitude;
//  - channels are mixed down to their mean, as librosa's to_mono does;
//  - the container is sniffed from the bytes first (SniffAudioFormat) and libsndfile must agree
//    with it; other containers libsndfile reads (AIFF, AU, raw...) are refused.
// Every failure is an Error: kInvalidArgument for what the caller sent (not audio, empty, over a
// limit), kCorrupt for bytes that break their format ("truncated WAV audio: ...", "corrupt FLAC
// audio: <library message>"), kUnsupported for an encoding libsndfile does not decode.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "media/audio_format.h"
#include "media/audio_limits.h"

namespace tandem {

// The largest magnitude a decoded (mono) sample may have. Float audio is nominally within +-1;
// this bound only keeps the log-mel power spectrum finite (docs/media.md § Audio).
inline constexpr float kMaxAudioSampleMagnitude = 10000.0f;

struct DecodedAudio {
  AudioFormat format = AudioFormat::kWav;
  int sample_rate = 0;         // of the file, Hz
  int channels = 0;            // of the file, before the mix-down
  std::vector<float> samples;  // mono

  double seconds() const { return sample_rate > 0 ? double(samples.size()) / sample_rate : 0.0; }
};

// Checks the byte size, sniffs the format, reads the header, checks channels, rate and length
// against `limits`, and only then decodes the samples (stopping at the length limit).
DecodedAudio DecodeAudio(std::span<const uint8_t> bytes, const AudioLimits& limits = {});

}  // namespace tandem
