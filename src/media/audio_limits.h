// Bounds an untrusted recording must fit. The decoder reads the container's header first
// (channels, sample rate, length) and checks it here before it decodes a sample, and it stops
// decoding as soon as the samples go over the length limit, so a small file whose header lies
// about its length costs no more than the limit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "media/audio_format.h"

namespace tandem {

struct AudioLimits {
  // The encoded file; OpenAI's transcription endpoint accepts files up to 25 MB.
  size_t max_bytes = size_t{25} << 20;
  // The length; mono float samples at the source rate are held while decoding (about 46 MB for
  // 20 minutes of 48 kHz audio).
  double max_seconds = 1200.0;
  int max_channels = 8;
  // The source sample rate, before resampling to the model's rate.
  int min_sample_rate = 1000;
  int max_sample_rate = 384000;
};

// Throws Error(kInvalidArgument) when `size` is zero or over `limits.max_bytes`.
void CheckAudioByteSize(size_t size, const AudioLimits& limits);

// Throws Error(kInvalidArgument) naming the format and the value when the channel count is not
// 1..max_channels, the sample rate is outside min..max_sample_rate, or `frames` (samples per
// channel; negative when the header does not say) is over max_seconds at that rate.
void CheckAudioHeader(AudioFormat format, int channels, int sample_rate, int64_t frames,
                      const AudioLimits& limits);

// The most samples per channel `limits` allows at `sample_rate`.
int64_t MaxAudioFrames(int sample_rate, const AudioLimits& limits);

}  // namespace tandem
