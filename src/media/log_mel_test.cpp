#include "media/log_mel.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "media/audio_features.h"

namespace tandem {
namespace {

TEST(LogMelFrameCount, CountsFramesThatEndOnARealSample) {
  EXPECT_EQ(LogMelFrameCount(0), 0);
  EXPECT_EQ(LogMelFrameCount(160), 0);
  EXPECT_EQ(LogMelFrameCount(161), 1);
  EXPECT_EQ(LogMelFrameCount(320), 1);
  EXPECT_EQ(LogMelFrameCount(321), 2);
  EXPECT_EQ(LogMelFrameCount(16000), 99);     // 1 s
  EXPECT_EQ(LogMelFrameCount(480000), 2999);  // 30 s
}

// HTK mel of 8000 Hz is 2840.02; the 130 edges are equally spaced in mel, so filter m peaks at
// mel (m + 1) · 2840.02 / 129, and a filter's weight at an FFT bin is the triangle's height there.
TEST(MelFilterBank, TrianglesBetweenMelSpacedEdges) {
  const std::vector<double>& bank = MelFilterBank();
  ASSERT_EQ(bank.size(), size_t(257 * kMelBins));
  const double mel_max = 2595.0 * std::log10(1.0 + 8000.0 / 700.0);
  auto edge = [&](int i) { return 700.0 * (std::pow(10.0, mel_max * i / 129 / 2595.0) - 1.0); };
  for (int m = 0; m < kMelBins; ++m) {
    for (int k = 0; k < 257; ++k) {
      const double hz = 31.25 * k;
      double expected = 0.0;
      if (hz > edge(m) && hz <= edge(m + 1)) expected = (hz - edge(m)) / (edge(m + 1) - edge(m));
      if (hz > edge(m + 1) && hz < edge(m + 2)) {
        expected = (edge(m + 2) - hz) / (edge(m + 2) - edge(m + 1));
      }
      ASSERT_NEAR(bank[size_t(k) * kMelBins + size_t(m)], expected, 1e-12) << m << " " << k;
    }
  }
}

TEST(ComputeLogMel, SilenceIsTheLogOfTheFloor) {
  const std::vector<float> silence(1600, 0.0f);
  for (MelLogFloor floor : {MelLogFloor::kAdd, MelLogFloor::kClamp}) {
    LogMel mel = ComputeLogMel(silence, floor);
    ASSERT_EQ(mel.frames, 9);
    for (float v : mel.values) ASSERT_EQ(v, float(std::log(1e-3)));
  }
}

// A loud tone: its mel band is far above the floor (both rules agree to float precision
// there), and the band holding it is the strongest.
TEST(ComputeLogMel, AToneLightsItsOwnBand) {
  std::vector<float> tone(16000);
  for (size_t i = 0; i < tone.size(); ++i) {
    tone[i] = float(0.5 * std::sin(2.0 * std::numbers::pi * 2000.0 * double(i) / 16000));
  }
  LogMel add = ComputeLogMel(tone, MelLogFloor::kAdd);
  LogMel clamp = ComputeLogMel(tone, MelLogFloor::kClamp);
  ASSERT_EQ(add.frames, 99);
  // 2000 Hz is mel 1521.4; the filter centred nearest is m with (m + 1) · 22.016 ≈ 1521.4.
  const int expected_band = int(std::lround(2595.0 * std::log10(1.0 + 2000.0 / 700.0) /
                                            (2595.0 * std::log10(1.0 + 8000.0 / 700.0) / 129))) -
                            1;
  for (int f = 2; f < add.frames; ++f) {
    std::span<const float> row = add.row(f);
    const int best = int(std::max_element(row.begin(), row.end()) - row.begin());
    EXPECT_NEAR(best, expected_band, 1) << f;
    EXPECT_NEAR(row[size_t(best)], clamp.row(f)[size_t(best)], 1e-4);
    EXPECT_GT(row[size_t(best)], 3.0f);
  }
}

TEST(LogMelChunks, LongAudioIsCutInto30SecondChunksOrTruncated) {
  std::vector<float> samples(kAudioChunkSamples * 2 + 16000 + 100);
  for (size_t i = 0; i < samples.size(); ++i) samples[i] = float(std::sin(double(i) * 0.37) * 0.3);
  std::vector<LogMel> chunks = LogMelChunks(samples);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].frames, 2999);
  EXPECT_EQ(chunks[1].frames, 2999);
  EXPECT_EQ(chunks[2].frames, LogMelFrameCount(16100));
  // Each chunk is featurised alone: the second starts with its own 160 zeros.
  LogMel second = ComputeLogMel(std::span(samples).subspan(kAudioChunkSamples, kAudioChunkSamples));
  ASSERT_EQ(second.values.size(), chunks[1].values.size());
  EXPECT_EQ(std::memcmp(second.values.data(), chunks[1].values.data(),
                        second.values.size() * sizeof(float)),
            0);
  AudioFeatureOptions truncate;
  truncate.long_audio = LongAudioRule::kTruncate;
  chunks = LogMelChunks(samples, truncate);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].frames, 2999);
  // A tail under one frame is dropped.
  samples.resize(kAudioChunkSamples + 160);
  EXPECT_EQ(LogMelChunks(samples).size(), 1u);
  samples.resize(100);
  EXPECT_TRUE(LogMelChunks(samples).empty());
}

}  // namespace
}  // namespace tandem
