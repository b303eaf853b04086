#include "media/audio_features.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "media/audio_resample.h"

namespace tandem {

std::vector<LogMel> LogMelChunks(std::span<const float> samples,
                                 const AudioFeatureOptions& options) {
  std::vector<LogMel> chunks;
  for (size_t start = 0; start < samples.size(); start += kAudioChunkSamples) {
    const size_t length = std::min(kAudioChunkSamples, samples.size() - start);
    LogMel chunk = ComputeLogMel(samples.subspan(start, length), options.log_floor);
    if (chunk.frames > 0) chunks.push_back(std::move(chunk));
    if (options.long_audio == LongAudioRule::kTruncate) break;
  }
  return chunks;
}

AudioFeatures PrepareAudio(std::span<const uint8_t> bytes, const AudioLimits& limits,
                           const AudioFeatureOptions& options) {
  DecodedAudio decoded = DecodeAudio(bytes, limits);
  AudioFeatures features;
  features.format = decoded.format;
  features.source_sample_rate = decoded.sample_rate;
  features.source_channels = decoded.channels;
  features.seconds = decoded.seconds();
  std::vector<float> samples =
      ResampleAudio(decoded.samples, decoded.sample_rate, kAudioModelSampleRate);
  decoded.samples = {};
  features.chunks = LogMelChunks(samples, options);
  if (features.chunks.empty()) {
    Fail(ErrorKind::kInvalidArgument, std::string(AudioFormatName(decoded.format)) + " audio of " +
                                          std::to_string(samples.size()) +
                                          " samples at 16 kHz is shorter than one 20 ms frame");
  }
  return features;
}

}  // namespace tandem
