// libFuzzer target: arbitrary bytes as an audio file (WAV, FLAC, Ogg Vorbis/Opus, MP3 through
// libsndfile behind tandem's limits and error handling), the claimed-format check, and for what
// decodes the resampling to 16 kHz and the log-mel features. Only tandem::Error may escape;
// anything else (crash, leak, UB, OOM, a hang) is a finding. Seeds: corpus/fuzz_audio_decode/,
// tiny files of each kind written with libsndfile.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "media/audio_decode.h"
#include "media/audio_features.h"
#include "media/audio_format.h"
#include "media/audio_resample.h"
#include "media/log_mel.h"

namespace {

// Smaller than the defaults so one input's buffers and work stay small.
tandem::AudioLimits FuzzLimits() {
  tandem::AudioLimits limits;
  limits.max_bytes = size_t{1} << 20;
  limits.max_seconds = 4.0;
  return limits;
}

void CheckDecoded(const tandem::DecodedAudio& audio, const tandem::AudioLimits& limits) {
  if (audio.samples.empty() || audio.channels < 1 || audio.channels > limits.max_channels ||
      audio.sample_rate < limits.min_sample_rate || audio.sample_rate > limits.max_sample_rate ||
      audio.seconds() > limits.max_seconds) {
    __builtin_trap();
  }
  for (float v : audio.samples) {
    if (!std::isfinite(v)) __builtin_trap();
  }
}

// Resample and featurise the first second at most (enough to reach every path).
void Featurise(const tandem::DecodedAudio& audio) {
  const size_t count = std::min(audio.samples.size(), size_t(audio.sample_rate));
  const std::vector<float> resampled = tandem::ResampleAudio(
      std::span(audio.samples).first(count), audio.sample_rate, tandem::kAudioModelSampleRate);
  for (tandem::MelLogFloor floor : {tandem::MelLogFloor::kAdd, tandem::MelLogFloor::kClamp}) {
    tandem::AudioFeatureOptions options;
    options.log_floor = floor;
    for (const tandem::LogMel& chunk : tandem::LogMelChunks(resampled, options)) {
      if (chunk.frames <= 0 || chunk.values.size() != size_t(chunk.frames) * tandem::kMelBins) {
        __builtin_trap();
      }
      for (float v : chunk.values) {
        if (!std::isfinite(v)) __builtin_trap();
      }
    }
  }
}

}  // namespace

// libsndfile 1.2.0 does not release libvorbis' codec setup when an Ogg Vorbis stream's headers
// are broken (a few KB per such file, allocated in vorbis_info_init). That is the library's leak,
// not tandem's (docs/media.md § Audio, known issues); it is named here so that the fuzzer keeps
// looking for others.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:vorbis_info_init\n";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  const tandem::AudioLimits limits = FuzzLimits();
  try {
    const tandem::AudioFormat format = tandem::SniffAudioFormat(bytes);
    for (const char* claim : {"wav", "mp3", "flac", "ogg", "aac", ""}) {
      try {
        tandem::CheckClaimedAudioFormat(claim, format);
      } catch (const tandem::Error&) {
      }
    }
  } catch (const tandem::Error&) {
  }
  try {
    tandem::DecodedAudio audio = tandem::DecodeAudio(bytes, limits);
    CheckDecoded(audio, limits);
    Featurise(audio);
  } catch (const tandem::Error&) {
  }
  return 0;
}
