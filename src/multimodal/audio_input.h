// From audio bytes to the rows a recording takes in a prompt: decoded (media/audio_decode.h: the
// format sniffed, a claimed format checked, limits before samples), resampled to 16 kHz and cut
// into 30 s log-mel pieces (media/audio_features.h), keyed by a hash of the features, and encoded
// by the audio tower as a MediaJob that the engine runs; encoded recordings are kept by key, so
// one sent again costs no encode. Its rows are always attended causally (PromptMedia::audio).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "engine/request.h"
#include "media/audio_features.h"
#include "media/audio_limits.h"
#include "multimodal/media_cache.h"

namespace tandem {

class Gemma4AudioEncoder;

struct AudioInputOptions {
  AudioLimits limits;
  AudioFeatureOptions features;
  int cached = 16;          // encoded recordings kept by key
  int max_per_request = 8;  // recordings one request may hold (checked by CheckCount)
};

// A recording ready to encode.
struct PreparedAudio {
  uint64_t key = 0;
  int tokens = 0;
  double seconds = 0.0;  // of the decoded recording
  std::shared_ptr<const AudioFeatures> features;
};

class AudioInput {
 public:
  AudioInput(const Gemma4AudioEncoder& encoder, AudioInputOptions options);
  ~AudioInput();

  const Gemma4AudioEncoder& encoder() const { return encoder_; }
  const AudioInputOptions& options() const { return options_; }

  // Any thread. Throws Error(kInvalidArgument / kCorrupt / kUnsupported) saying what is wrong
  // with the bytes; `claimed_format` (a name or media type; empty: not checked) must match them.
  PreparedAudio Prepare(std::span<const uint8_t> bytes, const std::string& claimed_format) const;

  // The recording as a prompt media item (begin left 0, audio: causal): its rows from the cache, or
  // a job that encodes them on the engine's pool and keeps them.
  PromptMedia ToMedia(const PreparedAudio& audio);

  // Throws Error(kInvalidArgument) when `count` recordings are over options().max_per_request.
  void CheckCount(size_t count) const;

  // Encodes run so far.
  uint64_t encodes() const { return cache_.encodes(); }

 private:
  class EncodeJob;

  const Gemma4AudioEncoder& encoder_;
  AudioInputOptions options_;
  MediaRowCache cache_;
};

}  // namespace tandem
