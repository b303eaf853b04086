// The audio tower's properties that hold whatever its values: bitwise independence of the thread
// count, of the kernel chunking and of what else shares the call; causality (a token never
// depends on later frames); pieces that run interleaved with another encoding; errors before any
// work. Its values are held to the float64 NumPy reference by ctest reference_audio_parity
// (tests/reference_parity/run_audio_parity.py).
#include "encoders/gemma4a/encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/thread_pool.h"
#include "encoders/encoders_test_util.h"
#include "encoders/gemma4a/encoding.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4a/random_mmproj.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::TempPath;
using Mel = Gemma4AudioEncoder::Mel;

std::string WriteTiny(const std::string& name, TensorType type, bool clamps = true) {
  const std::string path = TempPath(name);
  RandomMmprojOptions o;
  o.weight_type = type;
  Gemma4AudioConfig c = Gemma4AudioPreset("tiny");
  c.clipped_linears = clamps;
  WriteRandomGemma4AudioMmproj(c, o, path);
  return path;
}

std::vector<float> Features(int frames, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(-4.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(frames) * 128);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<float> EncodeOne(const Gemma4AudioEncoder& enc, const std::vector<float>& mel,
                             ThreadPool& pool) {
  const Mel m{mel.data(), static_cast<int>(mel.size() / 128)};
  return enc.Encode({&m, 1}, pool);
}

TEST(Gemma4AudioEncoder, TokenCountIsOnePer40ms) {
  EXPECT_EQ(Gemma4AudioEncoder::Tokens(1), 1);
  EXPECT_EQ(Gemma4AudioEncoder::Tokens(4), 1);
  EXPECT_EQ(Gemma4AudioEncoder::Tokens(5), 2);
  EXPECT_EQ(Gemma4AudioEncoder::Tokens(99), 25);
  EXPECT_EQ(Gemma4AudioEncoder::Tokens(2999), 750);
  auto enc = Gemma4AudioEncoder::Load(WriteTiny("aenc_count.gguf", TensorType::kF32));
  ThreadPool pool(1);
  for (int frames : {1, 2, 5, 99, 130}) {
    const auto out = EncodeOne(*enc, Features(frames, 1), pool);
    EXPECT_EQ(out.size(), static_cast<size_t>(Gemma4AudioEncoder::Tokens(frames)) * 128);
    for (float v : out) ASSERT_TRUE(std::isfinite(v));
  }
}

void ExpectInvariant(const std::string& path) {
  auto enc = Gemma4AudioEncoder::Load(path);
  const auto a = Features(250, 7), b = Features(61, 8);
  ThreadPool one(1), two(2), three(3);
  const auto ref_a = EncodeOne(*enc, a, one), ref_b = EncodeOne(*enc, b, one);
  EXPECT_EQ(EncodeOne(*enc, a, two), ref_a);
  EXPECT_EQ(EncodeOne(*enc, a, three), ref_a);
  // Both pieces in one call: each one's tokens, in order.
  const Mel both[2] = {{a.data(), 250}, {b.data(), 61}};
  std::vector<float> expected = ref_a;
  expected.insert(expected.end(), ref_b.begin(), ref_b.end());
  EXPECT_EQ(enc->Encode(both, two), expected);
}

TEST(Gemma4AudioEncoder, BitwiseIndependentOfThreadsAndPiecesF32) {
  ExpectInvariant(WriteTiny("aenc_inv_f32.gguf", TensorType::kF32));
}

TEST(Gemma4AudioEncoder, BitwiseIndependentOfThreadsAndPiecesF16) {
  ExpectInvariant(WriteTiny("aenc_inv_f16.gguf", TensorType::kF16));
}

TEST(Gemma4AudioEncoder, BitwiseIndependentOfThreadsAndPiecesQ8_0) {
  ExpectInvariant(WriteTiny("aenc_inv_q8.gguf", TensorType::kQ8_0));
}

// Attention and the depthwise convolution look only back, and the subsampling looks one frame
// ahead per stage: the first m tokens of 4m frames are those of any longer recording with the
// same first 4m frames.
TEST(Gemma4AudioEncoder, ATokenDependsOnlyOnEarlierFrames) {
  auto enc = Gemma4AudioEncoder::Load(WriteTiny("aenc_causal.gguf", TensorType::kF32));
  ThreadPool pool(2);
  const auto full = Features(400, 3);  // 100 tokens: several attention blocks
  const auto all = EncodeOne(*enc, full, pool);
  for (int m : {1, 11, 12, 13, 37}) {
    const std::vector<float> head(full.begin(), full.begin() + 4 * m * 128);
    const auto part = EncodeOne(*enc, head, pool);
    ASSERT_EQ(part.size(), static_cast<size_t>(m) * 128);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), all.begin())) << m << " tokens";
  }
  // And a later frame does change later tokens (the window is not empty).
  auto changed = full;
  changed[399 * 128] += 3.0f;
  const auto other = EncodeOne(*enc, changed, pool);
  EXPECT_TRUE(std::equal(other.begin(), other.begin() + 99 * 128, all.begin()));
  EXPECT_NE(other, all);
}

// Each layer reaches 11 tokens back through the attention and 4 through the convolution, and the
// subsampling mixes neighbouring tokens: a change in the first frames leaves every token beyond
// that reach bitwise unchanged (a full causal attention would not).
TEST(Gemma4AudioEncoder, TheWindowIsLocal) {
  auto enc = Gemma4AudioEncoder::Load(WriteTiny("aenc_local.gguf", TensorType::kF32));
  ThreadPool pool(1);
  const auto full = Features(400, 4);
  const auto all = EncodeOne(*enc, full, pool);
  auto changed = full;
  for (int f = 0; f < 4; ++f) changed[f * 128 + 5] += 2.0f;  // frames 0-3: token 0 (and 1)
  const auto other = EncodeOne(*enc, changed, pool);
  const int reach = 2 * (11 + 4) + 2;  // layers · (attention + conv) + the subsampling's reach
  EXPECT_NE(std::vector<float>(other.begin(), other.begin() + 128),
            std::vector<float>(all.begin(), all.begin() + 128));
  EXPECT_TRUE(std::equal(other.begin() + reach * 128, other.end(), all.begin() + reach * 128));
}

TEST(Gemma4AudioEncoding, PiecesInterleavedWithAnotherEncodingGiveTheSameBits) {
  auto enc = Gemma4AudioEncoder::Load(WriteTiny("aenc_pieces.gguf", TensorType::kF32));
  ThreadPool pool(2);
  const auto a = Features(130, 5), b = Features(90, 6);
  const Mel ma[2] = {{a.data(), 130}, {b.data(), 90}};
  const Mel mb{b.data(), 90};
  const auto expected_a = enc->Encode(ma, pool), expected_b = enc->Encode({&mb, 1}, pool);
  Gemma4AudioEncoding ea(*enc, ma), eb(*enc, {&mb, 1});
  EXPECT_EQ(ea.pieces(), 2 * (enc->config().n_layer + 2));
  EXPECT_NE(ErrorOf([&] { (void)ea.Take(); }), "");
  bool done_a = false, done_b = false;
  while (!done_a || !done_b) {
    if (!done_a) done_a = ea.Step(pool);
    if (!done_b) done_b = eb.Step(pool);
  }
  EXPECT_EQ(ea.done(), ea.pieces());
  EXPECT_EQ(ea.Take(), expected_a);
  EXPECT_EQ(eb.Take(), expected_b);
}

TEST(Gemma4AudioEncoder, ClampsBite) {
  auto with = Gemma4AudioEncoder::Load(WriteTiny("aenc_clamp1.gguf", TensorType::kF32, true));
  auto without = Gemma4AudioEncoder::Load(WriteTiny("aenc_clamp0.gguf", TensorType::kF32, false));
  ThreadPool pool(1);
  const auto mel = Features(99, 9);
  EXPECT_NE(EncodeOne(*with, mel, pool), EncodeOne(*without, mel, pool));
}

TEST(Gemma4AudioEncoder, BadPiecesAreErrorsBeforeAnyWork) {
  auto enc = Gemma4AudioEncoder::Load(WriteTiny("aenc_bad.gguf", TensorType::kF32));
  ThreadPool pool(1);
  const auto mel = Features(10, 1);
  const Mel bad[2] = {{mel.data(), 10}, {mel.data(), 0}};
  EXPECT_NE(ErrorOf([&] { (void)enc->Encode(bad, pool); }).find("mel piece 1 has 0 frames"),
            std::string::npos);
  const Mel null{nullptr, 5};
  EXPECT_NE(ErrorOf([&] { (void)enc->Encode({&null, 1}, pool); }), "");
}

TEST(Gemma4AudioEncoder, AFileWithoutAnAudioTowerIsAnError) {
  EXPECT_NE(ErrorOf([&] { (void)Gemma4AudioEncoder::Load(TempPath("aenc_missing.gguf")); }), "");
}

}  // namespace
}  // namespace tandem
