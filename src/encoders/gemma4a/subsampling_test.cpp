// The conformer's input stage against a float64 computation written straight from the
// description (3×3 stride-2 convolutions with zero padding, channel LayerNorm, ReLU, flattening,
// projection), and bitwise the same on any thread count.
#include "encoders/gemma4a/subsampling.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/thread_pool.h"
#include "encoders/encoders_test_util.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4a/random_mmproj.h"
#include "encoders/mmproj_file.h"
#include "tensor/dequantize.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::TempPath;

std::vector<double> Values(const GgufFile& f, const std::string& name) {
  const TensorInfo* t = f.FindTensor(name);
  std::vector<float> v(t->n_elements());
  DequantizeRow(t->type, f.TensorData(*t), v.data(), static_cast<int64_t>(v.size()));
  return {v.begin(), v.end()};
}

// x [T][F][cin] -> [T'][F'][cout]; kernel GGUF {3 (freq), 3 (time), cin, cout}.
std::vector<double> RefStage(const std::vector<double>& x, int T, int F, int cin,
                             const std::vector<double>& k, const std::vector<double>& gain,
                             int cout, int& To, int& Fo) {
  To = (T + 1) / 2;
  Fo = (F + 1) / 2;
  std::vector<double> y(static_cast<size_t>(To) * Fo * cout);
  for (int t = 0; t < To; ++t) {
    for (int f = 0; f < Fo; ++f) {
      double* row = &y[(static_cast<size_t>(t) * Fo + f) * cout];
      for (int o = 0; o < cout; ++o) {
        double s = 0;
        for (int c = 0; c < cin; ++c) {
          for (int kt = 0; kt < 3; ++kt) {
            for (int kf = 0; kf < 3; ++kf) {
              const int ti = 2 * t + kt - 1, fi = 2 * f + kf - 1;
              if (ti < 0 || ti >= T || fi < 0 || fi >= F) continue;
              s += k[((static_cast<size_t>(o) * cin + c) * 3 + kt) * 3 + kf] *
                   x[(static_cast<size_t>(ti) * F + fi) * cin + c];
            }
          }
        }
        row[o] = s;
      }
      double mean = 0, var = 0;
      for (int o = 0; o < cout; ++o) mean += row[o] / cout;
      for (int o = 0; o < cout; ++o) var += (row[o] - mean) * (row[o] - mean) / cout;
      for (int o = 0; o < cout; ++o) {
        row[o] = std::max(0.0, (row[o] - mean) / std::sqrt(var + 1e-6) * gain[o]);
      }
    }
  }
  return y;
}

class Gemma4AudioSubsampling : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = TempPath("asub.gguf");
    WriteRandomGemma4AudioMmproj(Gemma4AudioPreset("tiny"), {}, path_);
    file_ = MmprojFile::Open(path_);
    config_ = Gemma4AudioConfig::FromMmproj(*file_);
    weights_ = Gemma4AudioWeights::Bind(file_->gguf(), config_);
  }
  std::vector<float> Mel(int frames) const {
    std::vector<float> mel(static_cast<size_t>(frames) * config_.n_mel);
    for (size_t i = 0; i < mel.size(); ++i) {
      mel[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f - 1.0f;
    }
    return mel;
  }
  std::string path_;
  std::unique_ptr<MmprojFile> file_;
  Gemma4AudioConfig config_;
  Gemma4AudioWeights weights_;
};

TEST_F(Gemma4AudioSubsampling, MatchesAFloat64Computation) {
  const GgufFile& f = file_->gguf();
  for (int frames : {1, 2, 5, 99}) {
    SCOPED_TRACE(frames);
    const std::vector<float> mel = Mel(frames);
    ThreadPool pool(2);
    const ActivationBuffer got = Gemma4AudioSubsample(config_, weights_, mel.data(), frames, pool);

    int T1, F1, T2, F2;
    const std::vector<double> x(mel.begin(), mel.end());
    const auto h1 = RefStage(x, frames, 128, 1, Values(f, "a.conv1d.0.weight"),
                             Values(f, "a.conv1d.0.norm.weight"), 128, T1, F1);
    const auto h2 = RefStage(h1, T1, F1, 128, Values(f, "a.conv1d.1.weight"),
                             Values(f, "a.conv1d.1.norm.weight"), 4, T2, F2);
    ASSERT_EQ(F2 * 4, 128);
    const auto proj = Values(f, "a.input_projection.weight");  // [32][128]
    ASSERT_EQ(got.size(), static_cast<size_t>(T2) * 32);
    double err = 0, ref = 0;
    for (int t = 0; t < T2; ++t) {
      for (int o = 0; o < 32; ++o) {
        double s = 0;
        for (int i = 0; i < 128; ++i) s += proj[o * 128 + i] * h2[t * 128 + i];
        err = std::max(err, std::abs(got[t * 32 + o] - s));
        ref = std::max(ref, std::abs(s));
      }
    }
    EXPECT_GT(ref, 0.1);
    EXPECT_LT(err, 1e-4 * ref) << "max error " << err << " of " << ref;
  }
  // One second of audio (99 frames) gives 25 rows, one per 40 ms.
  ThreadPool pool(1);
  EXPECT_EQ(Gemma4AudioSubsample(config_, weights_, Mel(99).data(), 99, pool).size(), 25u * 32);
}

TEST_F(Gemma4AudioSubsampling, BitwiseIndependentOfTheThreadCount) {
  const std::vector<float> mel = Mel(150);
  ThreadPool one(1);
  const ActivationBuffer want = Gemma4AudioSubsample(config_, weights_, mel.data(), 150, one);
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(Gemma4AudioSubsample(config_, weights_, mel.data(), 150, pool), want) << threads;
  }
}

TEST_F(Gemma4AudioSubsampling, NoFramesIsAnError) {
  ThreadPool pool(1);
  EXPECT_NE(ErrorOf([&] {
              Gemma4AudioSubsample(config_, weights_, nullptr, 0, pool);
            }).find("0 mel frames"),
            std::string::npos);
}

}  // namespace
}  // namespace tandem
