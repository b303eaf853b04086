#include "media/audio_resample.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "base/error.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

std::vector<float> Sine(size_t count, int rate, double hertz) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) {
    out[i] = float(0.5 * std::sin(2.0 * std::numbers::pi * hertz * double(i) / rate));
  }
  return out;
}

// A band-limited tone resampled is the same tone sampled at the new rate (away from the ends,
// where the filter sees the implicit silence), to well under 16-bit precision.
TEST(ResampleAudio, ATonePassesThroughAtTheNewRate) {
  for (int from : {48000, 44100, 22050, 8000}) {
    const size_t n = size_t(from) * 2;
    const std::vector<float> out = ResampleAudio(Sine(n, from, 1000.0), from, 16000);
    EXPECT_EQ(out.size(), size_t(std::llround(double(n) * 16000 / from))) << from;
    const std::vector<float> truth = Sine(out.size(), 16000, 1000.0);
    double worst = 0;
    for (size_t i = 2000; i + 2000 < out.size(); ++i) {
      worst = std::max(worst, std::abs(double(out[i]) - truth[i]));
    }
    EXPECT_LT(worst, 2e-5) << from;
  }
}

// A tone above the new Nyquist frequency (8 kHz) is removed, not folded back.
TEST(ResampleAudio, RemovesWhatTheNewRateCannotHold) {
  const std::vector<float> out = ResampleAudio(Sine(96000, 48000, 11000.0), 48000, 16000);
  double worst = 0;
  for (size_t i = 2000; i + 2000 < out.size(); ++i)
    worst = std::max(worst, double(std::abs(out[i])));
  EXPECT_LT(worst, 1e-4);
}

TEST(ResampleAudio, IsDeterministicAndCopiesAtTheSameRate) {
  const std::vector<float> in = Sine(44100, 44100, 440.0);
  const std::vector<float> a = ResampleAudio(in, 44100, 16000);
  const std::vector<float> b = ResampleAudio(in, 44100, 16000);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  EXPECT_EQ(ResampleAudio(in, 16000, 16000), in);
  EXPECT_TRUE(ResampleAudio({}, 44100, 16000).empty());
  testing_media::ExpectError([&] { ResampleAudio(in, 0, 16000); }, ErrorKind::kInvalidArgument,
                             "rates must be positive");
}

}  // namespace
}  // namespace tandem
