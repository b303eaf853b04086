#include "media/audio_resample.h"

#include <soxr.h>

#include <cmath>
#include <string>

#include "base/error.h"

namespace tandem {

std::vector<float> ResampleAudio(std::span<const float> samples, int from_rate, int to_rate) {
  if (from_rate <= 0 || to_rate <= 0) {
    Fail(ErrorKind::kInvalidArgument, "resampling from " + std::to_string(from_rate) + " Hz to " +
                                          std::to_string(to_rate) + " Hz: rates must be positive");
  }
  if (from_rate == to_rate) return std::vector<float>(samples.begin(), samples.end());
  const size_t out_length =
      static_cast<size_t>(std::llround(static_cast<double>(samples.size()) * to_rate / from_rate));
  std::vector<float> out(out_length);
  if (samples.empty() || out_length == 0) return {};
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t quality = soxr_quality_spec(SOXR_HQ, 0);
  const soxr_runtime_spec_t runtime = soxr_runtime_spec(1);
  size_t done = 0;
  soxr_error_t error = soxr_oneshot(from_rate, to_rate, 1, samples.data(), samples.size(), nullptr,
                                    out.data(), out.size(), &done, &io, &quality, &runtime);
  if (error) {
    Fail(ErrorKind::kInternal, std::string("resampling with libsoxr failed: ") + error);
  }
  out.resize(done);
  return out;
}

}  // namespace tandem
