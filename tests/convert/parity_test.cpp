// Logits of converted models: tandem on the f32 GGUF against the NumPy reference run on the
// ORIGINAL Hugging Face tensors (tests/convert/hf_reference.py), the assistant's first draft step
// likewise, and every weight type and quantization preset against the f32 logits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/thread_pool.h"
#include "convert/quantizer.h"
#include "hf_checkpoint.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/target.h"
#include "test_util.h"

namespace tandem::testing {
namespace {

// Same bound as the C++-vs-reference parity suite (tests/reference_parity): float32 against
// float64 arithmetic on conditioned tiny models.
constexpr double kF32Bound = 1e-3;

int ArgMax(const float* v, int n) {
  return static_cast<int>(std::max_element(v, v + n) - v);
}

void CheckTargetParity(const HfSpec& spec, int n_shards) {
  const std::string dir = ScratchDir(spec.name);
  WriteHfCheckpoint(MakeHfCheckpoint(spec), dir + "/hf", n_shards);
  Convert(dir + "/hf", dir + "/f32.gguf", TensorType::kF32);
  const std::vector<int32_t> tokens = TestTokens(spec.vocab);
  const auto ref = HfReference("logits " + dir + "/hf", tokens);
  if (!ref) GTEST_SKIP() << "NumPy (/usr/bin/python3) is not available for the reference";
  const std::vector<float> got = TandemLogits(dir + "/f32.gguf", tokens);
  const int V = spec.vocab, T = static_cast<int>(tokens.size());
  ASSERT_EQ(ref->size(), got.size());
  double worst = 0;
  for (int t = 0; t < T; ++t) {
    double ref_best = -1e300;
    int ref_arg = 0;
    for (int v = 0; v < V; ++v) {
      const double r = (*ref)[size_t(t) * V + v];
      worst = std::max(worst, std::abs(r - got[size_t(t) * V + v]));
      if (r > ref_best) ref_best = r, ref_arg = v;
    }
    EXPECT_EQ(ArgMax(got.data() + size_t(t) * V, V), ref_arg) << "position " << t;
  }
  EXPECT_LE(worst, kF32Bound) << spec.name;
  ::testing::Test::RecordProperty("max_abs_logit_diff_" + spec.name, std::to_string(worst));
}

TEST(ConvertParityTest, E2bLikeLogitsMatchReferenceOnHfTensors) {
  CheckTargetParity(E2bLikeSpec(), 2);
}
TEST(ConvertParityTest, Moe26bLikeLogitsMatchReferenceOnHfTensors) {
  CheckTargetParity(Moe26bLikeSpec(), 1);
}
TEST(ConvertParityTest, Dense31bLikeLogitsMatchReferenceOnHfTensors) {
  CheckTargetParity(Dense31bLikeSpec(), 1);
}

TEST(ConvertParityTest, AssistantDraftMatchesReferenceOnHfTensors) {
  const std::string dir = ScratchDir("pair");
  WriteHfCheckpoint(MakeHfCheckpoint(E2bLikeSpec()), dir + "/target", 1);
  WriteHfCheckpoint(MakeHfCheckpoint(AssistantSpec()), dir + "/assistant", 1);
  Convert(dir + "/target", dir + "/target.gguf", TensorType::kF32);
  Convert(dir + "/assistant", dir + "/assistant.gguf", TensorType::kF32);
  const std::vector<int32_t> tokens = TestTokens(512, 36);
  const auto ref = HfReference("draft " + dir + "/target " + dir + "/assistant", tokens);
  if (!ref) GTEST_SKIP() << "NumPy (/usr/bin/python3) is not available for the reference";

  auto target = Gemma4Model::Load(dir + "/target.gguf");
  auto assistant = Gemma4Assistant::Load(dir + "/assistant.gguf", *target, DraftHead::kAuto);
  ASSERT_TRUE(assistant->uses_centroids());
  EXPECT_EQ(assistant->n_centroids(), 8);
  EXPECT_EQ(assistant->centroid_top_k(), 2);
  const int T = static_cast<int>(tokens.size()), V = 512;
  auto cache =
      target->NewKvCache({.type = TensorType::kF32, .n_ctx = T + 4, .n_seq = 1, .max_batch = T});
  ForwardBatch batch;
  for (int i = 0; i < T; ++i) batch.Add(tokens[i], i, 0, i == T - 1);
  ForwardOutput out;
  ThreadPool pool(2);
  target->Forward(batch, *cache, out, pool);
  const int t0 = ArgMax(out.Logits(0), V);
  ASSERT_EQ(ref->size(), size_t(V) + 1);
  ASSERT_EQ(t0, static_cast<int>((*ref)[0]));
  DraftOutput draft;
  assistant->Step({DraftRow{t0, T, 0, out.Hidden(T - 1)}}, *cache, draft, pool);
  int n_finite = 0;
  double worst = 0;
  for (int v = 0; v < V; ++v) {
    const double r = (*ref)[1 + v];
    const float g = draft.Logits(0)[v];
    ASSERT_EQ(std::isfinite(r), std::isfinite(g)) << "token " << v;
    if (!std::isfinite(r)) continue;
    ++n_finite;
    worst = std::max(worst, std::abs(r - g));
  }
  EXPECT_EQ(n_finite, 2 * 512 / 8);  // top-2 of 8 clusters of 64 tokens
  EXPECT_LE(worst, kF32Bound);
}

struct Diff {
  double max_abs = 0, rms = 0;
};

Diff Compare(const std::vector<float>& a, const std::vector<float>& b) {
  Diff d;
  double sum = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double e = std::abs(double(a[i]) - b[i]);
    d.max_abs = std::max(d.max_abs, e);
    sum += e * e;
  }
  d.rms = std::sqrt(sum / a.size());
  return d;
}

// Error bounds (max |Δlogit|, rms Δlogit) against the f32 file's logits, about 1.5x the largest
// figures measured on these models (printed by the test). The logits have an rms of about 1.0 and
// the logits of unrelated weights would differ by an rms of about 1.4, so every bound still
// catches a broken encoding. MoE models get wider bounds: rounding flips the router's top-k
// choices (as tests/reference_parity found for activation rounding).
struct Bound {
  double max_abs, rms;
};
Bound BoundFor(std::string_view type, bool moe) {
  std::string t(type);
  for (char& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (t == "F16" || t == "BF16") return moe ? Bound{0.2, 0.03} : Bound{0.1, 0.02};
  if (t == "Q8_0" || t == "Q6_K") return moe ? Bound{2.5, 0.3} : Bound{0.6, 0.15};
  if (t == "Q5_0" || t == "Q5_1" || t == "Q5_K_S" || t == "Q5_K_M") {
    return moe ? Bound{5.0, 0.7} : Bound{1.5, 0.3};
  }
  // 2- and 3-bit presets: looser, but the rms bound stays under that of unrelated weights.
  if (t == "Q2_K" || t.starts_with("Q3_K")) return moe ? Bound{6.5, 1.2} : Bound{5.0, 1.2};
  return moe ? Bound{6.0, 1.0} : Bound{2.5, 0.55};  // 4-bit presets (IQ4_NL, IQ4_XS too)
}

TEST(ConvertParityTest, EveryWeightTypeAndPresetStaysNearF32Logits) {
  for (const HfSpec& spec : {E2bLikeSpec(), Moe26bLikeSpec(), Dense31bLikeSpec()}) {
    SCOPED_TRACE(spec.name);
    const std::string dir = ScratchDir(spec.name);
    WriteHfCheckpoint(MakeHfCheckpoint(spec), dir + "/hf", 1);
    Convert(dir + "/hf", dir + "/f32.gguf", TensorType::kF32);
    const std::vector<int32_t> tokens = TestTokens(spec.vocab, 24);
    const std::vector<float> base = TandemLogits(dir + "/f32.gguf", tokens);
    auto check = [&](const std::string& path, std::string_view type) {
      const std::vector<float> got = TandemLogits(path, tokens);
      ASSERT_EQ(got.size(), base.size());
      for (float v : got) ASSERT_TRUE(std::isfinite(v)) << type;
      const Diff d = Compare(got, base);
      const Bound b = BoundFor(type, spec.experts > 0);
      EXPECT_LE(d.max_abs, b.max_abs) << type;
      EXPECT_LE(d.rms, b.rms) << type;
      std::printf("  %-4s %-7s max |dlogit| %.4f  rms %.4f\n", spec.name.c_str(),
                  std::string(type).c_str(), d.max_abs, d.rms);
    };
    for (TensorType type : {TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0}) {
      const std::string path = dir + "/" + std::string(TensorTypeName(type)) + ".gguf";
      Convert(dir + "/hf", path, type);
      check(path, TensorTypeName(type));
    }
    for (const QuantPresetInfo& p : QuantPresets()) {
      const std::string path = dir + "/" + std::string(p.name) + ".gguf";
      QuantizeOptions options;
      options.preset = p.preset;
      options.progress = false;
      QuantizeGguf(dir + "/f32.gguf", path, options);
      check(path, p.name);
    }
  }
}

}  // namespace
}  // namespace tandem::testing
