// An audio file's bytes to the log-mel chunks Gemma 4's audio tower encodes: decode
// (audio_decode.h), resample to 16 kHz (audio_resample.h), then log-mel features (log_mel.h)
// per chunk of at most 30 seconds. docs/media.md § Long recordings explains the two rules:
// llama.cpp encodes every 30 s chunk separately (the default: nothing is dropped); transformers
// keeps only the first 30 s.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "media/audio_decode.h"
#include "media/audio_limits.h"
#include "media/log_mel.h"

namespace tandem {

// 30 s at 16 kHz.
inline constexpr size_t kAudioChunkSamples = 480000;

enum class LongAudioRule {
  kChunk,     // consecutive chunks of kAudioChunkSamples, each featurised alone (llama.cpp)
  kTruncate,  // only the first kAudioChunkSamples (transformers' default max_length)
};

struct AudioFeatureOptions {
  MelLogFloor log_floor = MelLogFloor::kAdd;
  LongAudioRule long_audio = LongAudioRule::kChunk;
};

// The log-mel features of 16 kHz mono samples, one LogMel per chunk. Each chunk gets its own
// 160 leading zeros and frame count; a final chunk too short for one frame (under 161 samples,
// about 10 ms) is dropped. Empty when `samples` is shorter than one frame.
std::vector<LogMel> LogMelChunks(std::span<const float> samples,
                                 const AudioFeatureOptions& options = {});

struct AudioFeatures {
  AudioFormat format = AudioFormat::kWav;
  int source_sample_rate = 0;
  int source_channels = 0;
  double seconds = 0.0;  // of the decoded recording, before any truncation
  std::vector<LogMel> chunks;

  int frames() const {
    int total = 0;
    for (const LogMel& chunk : chunks) total += chunk.frames;
    return total;
  }
};

// Decode, resample, featurise. Throws what DecodeAudio throws, and Error(kInvalidArgument)
// "audio of N samples at 16 kHz is shorter than one 20 ms frame" when no frame results.
AudioFeatures PrepareAudio(std::span<const uint8_t> bytes, const AudioLimits& limits = {},
                           const AudioFeatureOptions& options = {});

}  // namespace tandem
