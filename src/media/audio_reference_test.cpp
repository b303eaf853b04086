// tandem's audio front end against the float64 NumPy reference (tools/reference/audio.py,
// written from transformers' description): the same 16-bit WAV files, generated here, go through
// PrepareAudio and `reference.py audio-mel`. Skipped when /usr/bin/python3 has no NumPy.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "media/audio_features.h"
#include "media/audio_test_util.h"

namespace tandem {
namespace {

// tandem computes in double and stores floats; the features lie within ±16, where a float's
// half ulp is under 1e-6, so that is the bound (a wrong window or floor is off by far more).
constexpr double kTolerance = 1e-6;

bool HaveNumpy() {
  return std::system("/usr/bin/python3 -c 'import numpy' 2>/dev/null") == 0;
}

// A .npy file of little-endian float64, C order, shape (rows, 128).
std::vector<double> ReadNpy(const std::string& path, size_t* rows) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  const size_t header_length = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
  const std::string header = bytes.substr(10, header_length);
  EXPECT_NE(header.find("'descr': '<f8'"), std::string::npos) << header;
  EXPECT_NE(header.find("'fortran_order': False"), std::string::npos) << header;
  const size_t shape = header.find("'shape': (");
  EXPECT_NE(shape, std::string::npos) << header;
  *rows = std::stoul(header.substr(shape + 10));
  EXPECT_NE(header.find(", 128)"), std::string::npos) << header;
  std::vector<double> values(*rows * kMelBins);
  EXPECT_EQ(bytes.size(), 10 + header_length + values.size() * 8);
  std::memcpy(values.data(), bytes.data() + 10 + header_length, values.size() * 8);
  return values;
}

std::string RunReference(const std::string& wav, const std::string& out, const char* floor) {
  const std::string command = std::string("/usr/bin/python3 ") + TANDEM_SOURCE_DIR +
                              "/tools/reference/reference.py audio-mel --wav " + wav + " --out " +
                              out + " --log-floor " + floor;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string output;
  char buffer[256];
  while (pipe && std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  EXPECT_EQ(pipe ? pclose(pipe) : -1, 0) << command;
  return output;
}

void CompareWithReference(const std::string& name, size_t seconds_x10, int channels,
                          MelLogFloor floor) {
  const int rate = 16000;
  const double tones[] = {180.0, 950.0, 2600.0, 6100.0};
  const size_t count = seconds_x10 * rate / 10;
  std::vector<int16_t> pcm(count * size_t(channels));
  for (int c = 0; c < channels; ++c) {
    const std::vector<float> signal =
        testing_media::MakeTestSignal(count, rate, tones, 0.6, uint32_t(11 + c));
    for (size_t i = 0; i < count; ++i) {
      pcm[i * size_t(channels) + size_t(c)] = int16_t(std::lround(signal[i] * 32767.0));
    }
  }
  const std::vector<uint8_t> wav = testing_media::WavPcm16(pcm, channels, rate);
  const std::string wav_path = ::testing::TempDir() + "/tandem_audio_" + name + ".wav";
  const std::string npy_path = ::testing::TempDir() + "/tandem_audio_" + name + ".npy";
  testing_media::WriteFile(wav_path, wav);
  const char* floor_name = floor == MelLogFloor::kAdd ? "add" : "clamp";
  const std::string report = RunReference(wav_path, npy_path, floor_name);

  AudioFeatureOptions options;
  options.log_floor = floor;
  const AudioFeatures features = PrepareAudio(wav, {}, options);
  std::ostringstream chunks;
  chunks << "{\"chunks\": [";
  for (size_t i = 0; i < features.chunks.size(); ++i) {
    chunks << (i ? ", " : "") << features.chunks[i].frames;
  }
  chunks << "]";
  EXPECT_EQ(report.rfind(chunks.str(), 0), 0u) << report;

  size_t rows = 0;
  const std::vector<double> truth = ReadNpy(npy_path, &rows);
  ASSERT_EQ(rows, size_t(features.frames()));
  double worst = 0;
  size_t row = 0;
  for (const LogMel& chunk : features.chunks) {
    for (int f = 0; f < chunk.frames; ++f, ++row) {
      for (int m = 0; m < kMelBins; ++m) {
        const double diff =
            std::abs(double(chunk.row(f)[size_t(m)]) - truth[row * kMelBins + size_t(m)]);
        worst = std::max(worst, diff);
      }
    }
  }
  EXPECT_LE(worst, kTolerance) << name;
  std::remove(wav_path.c_str());
  std::remove(npy_path.c_str());
}

TEST(AudioReference, MonoWavMatchesNumpyWithTransformersFloor) {
  if (!HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 has no NumPy";
  CompareWithReference("mono_add", 25, 1, MelLogFloor::kAdd);
}

TEST(AudioReference, MonoWavMatchesNumpyWithLlamaCppFloor) {
  if (!HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 has no NumPy";
  CompareWithReference("mono_clamp", 25, 1, MelLogFloor::kClamp);
}

TEST(AudioReference, StereoWavIsMixedAsTheReferenceMixesIt) {
  if (!HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 has no NumPy";
  CompareWithReference("stereo", 12, 2, MelLogFloor::kAdd);
}

TEST(AudioReference, RecordingsOver30SecondsAreChunkedAsTheReferenceChunks) {
  if (!HaveNumpy()) GTEST_SKIP() << "/usr/bin/python3 has no NumPy";
  CompareWithReference("long", 312, 1, MelLogFloor::kAdd);
}

}  // namespace
}  // namespace tandem
