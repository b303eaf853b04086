#include "media/audio_limits.h"

#include <cmath>
#include <string>

#include "base/error.h"

namespace tandem {

void CheckAudioByteSize(size_t size, const AudioLimits& limits) {
  if (size == 0) Fail(ErrorKind::kInvalidArgument, "audio file is empty (zero bytes)");
  if (size > limits.max_bytes) {
    Fail(ErrorKind::kInvalidArgument, "audio file of " + std::to_string(size) +
                                          " bytes is over the limit of " +
                                          std::to_string(limits.max_bytes) + " bytes");
  }
}

int64_t MaxAudioFrames(int sample_rate, const AudioLimits& limits) {
  return static_cast<int64_t>(std::floor(limits.max_seconds * sample_rate));
}

void CheckAudioHeader(AudioFormat format, int channels, int sample_rate, int64_t frames,
                      const AudioLimits& limits) {
  const std::string what = std::string(AudioFormatName(format)) + " audio";
  if (channels < 1 || channels > limits.max_channels) {
    Fail(ErrorKind::kInvalidArgument, what + " with " + std::to_string(channels) +
                                          " channels: supported are 1 to " +
                                          std::to_string(limits.max_channels));
  }
  if (sample_rate < limits.min_sample_rate || sample_rate > limits.max_sample_rate) {
    Fail(ErrorKind::kInvalidArgument, what + " at " + std::to_string(sample_rate) +
                                          " Hz: supported are " +
                                          std::to_string(limits.min_sample_rate) + " to " +
                                          std::to_string(limits.max_sample_rate) + " Hz");
  }
  if (frames > MaxAudioFrames(sample_rate, limits)) {
    const double seconds = static_cast<double>(frames) / sample_rate;
    Fail(ErrorKind::kInvalidArgument, what + " of " + std::to_string(seconds) +
                                          " seconds is over the limit of " +
                                          std::to_string(limits.max_seconds) + " seconds");
  }
}

}  // namespace tandem
