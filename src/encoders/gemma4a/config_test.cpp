// The gemma4a keys: the presets' shapes, a round trip through the writer and the reader with
// llama.cpp's key types, and errors naming the file and the key for missing, mistyped and
// inconsistent keys.
#include "encoders/gemma4a/config.h"

#include <gtest/gtest.h>

#include <functional>

#include "encoders/encoders_test_util.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4a/random_mmproj.h"
#include "encoders/mmproj_file.h"
#include "encoders/mmproj_keys.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::RewriteGguf;
using testing::TempPath;

std::string WriteAudio(const std::string& name, const Gemma4AudioConfig& c) {
  const std::string path = TempPath(name);
  WriteRandomGemma4AudioMmproj(c, {}, path);
  return path;
}

// The tiny audio file with its keys edited by `edit`.
std::string WriteKeys(const std::string& name, const std::function<void(GgufWriter&)>& edit) {
  static const std::string src = WriteAudio("acfg_src.gguf", Gemma4AudioPreset("tiny"));
  const std::string dst = TempPath(name);
  RewriteGguf(src, dst, edit, nullptr);
  return dst;
}

Gemma4AudioConfig Read(const std::string& path) {
  return Gemma4AudioConfig::FromMmproj(*MmprojFile::Open(path));
}

TEST(Gemma4AudioConfig, PresetsRoundTripTheirKeysAndTensorFacts) {
  for (const char* name : {"tiny", "tiny-e2b"}) {
    SCOPED_TRACE(name);
    const Gemma4AudioConfig want = Gemma4AudioPreset(name);
    const std::string path = WriteAudio("acfg_rt.gguf", want);
    const Gemma4AudioConfig got = Read(path);
    EXPECT_EQ(got.n_embd, want.n_embd);
    EXPECT_EQ(got.n_ff, want.n_ff);
    EXPECT_EQ(got.n_layer, want.n_layer);
    EXPECT_EQ(got.n_head, want.n_head);
    EXPECT_EQ(got.n_mel, want.n_mel);
    EXPECT_EQ(got.n_embd_text, want.n_embd_text);
    EXPECT_EQ(got.eps, want.eps);
    EXPECT_EQ(got.sub_channels0, want.sub_channels0);
    EXPECT_EQ(got.sub_channels1, want.sub_channels1);
    EXPECT_EQ(got.n_out, want.n_out);
    EXPECT_EQ(got.clipped_linears, want.clipped_linears);

    // llama.cpp's key types: u32 sizes, an f32 epsilon, the flag and the projector type.
    auto f = GgufFile::Open(path);
    EXPECT_TRUE(f->GetBool(mmproj::kHasAudio));
    EXPECT_FALSE(f->HasKey(mmproj::kHasVision));
    EXPECT_FALSE(f->HasKey(mmproj::kProjectorType));  // Gemma 4's converter writes per modality
    EXPECT_EQ(f->GetString(mmproj::kAudioProjectorType), "gemma4a");
    EXPECT_EQ(f->GetU32(mmproj::kAudioEmbeddingLength), uint32_t(want.n_embd));
    EXPECT_EQ(f->GetU32(mmproj::kAudioFeedForwardLength), uint32_t(4 * want.n_embd));
    EXPECT_EQ(f->GetU32(mmproj::kAudioBlockCount), uint32_t(want.n_layer));
    EXPECT_EQ(f->GetU32(mmproj::kAudioHeadCount), uint32_t(want.n_head));
    EXPECT_EQ(f->GetU32(mmproj::kAudioNumMelBins), 128u);
    EXPECT_EQ(f->GetU32(mmproj::kAudioProjectionDim), 128u);
    EXPECT_EQ(f->GetF32(mmproj::kAudioLayerNormEps), 1e-6f);
  }
  // Without clamp bounds or output projection, the reader sees that too.
  Gemma4AudioConfig plain = Gemma4AudioPreset("tiny");
  plain.clipped_linears = false;
  plain.n_out = 0;
  const Gemma4AudioConfig got = Read(WriteAudio("acfg_plain.gguf", plain));
  EXPECT_FALSE(got.clipped_linears);
  EXPECT_EQ(got.n_out, 0);
  EXPECT_EQ(got.out_width(), 32);
}

TEST(Gemma4AudioConfig, RealShapesAreTheSpecs) {
  for (const char* name : {"e2b", "e4b"}) {
    const Gemma4AudioConfig c = Gemma4AudioPreset(name);
    EXPECT_EQ(c.n_embd, 1024);
    EXPECT_EQ(c.n_ff, 4096);
    EXPECT_EQ(c.n_layer, 12);
    EXPECT_EQ(c.head_dim(), 128);
    EXPECT_EQ(c.n_mel, 128);
    EXPECT_EQ(c.sub_freq(), 32);
    EXPECT_EQ(c.sub_width(), 1024);  // 32 frequencies x 32 channels
    EXPECT_EQ(c.n_out, 1536);
    EXPECT_TRUE(c.clipped_linears);
  }
  EXPECT_EQ(Gemma4AudioPreset("e2b").n_embd_text, 1536);
  EXPECT_EQ(Gemma4AudioPreset("e4b").n_embd_text, 2560);
  const Gemma4AudioConfig tiny = Gemma4AudioPreset("tiny-e4b");
  EXPECT_EQ(tiny.head_dim(), 16);
  EXPECT_EQ(tiny.sub_width(), 128);  // 32 frequencies x 4 channels
  EXPECT_TRUE(HasGemma4AudioPreset("tiny-e2b"));
  EXPECT_FALSE(HasGemma4AudioPreset("tiny-31b"));
  EXPECT_NE(ErrorOf([] { Gemma4AudioPreset("31b"); }).find("'31b' has no audio tower"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { Gemma4AudioPreset("12b"); }).find("valid: e2b, e4b, tiny"),
            std::string::npos);
}

TEST(Gemma4AudioConfig, MissingRequiredKeysAreNamed) {
  for (const char* key :
       {mmproj::kAudioProjectionDim, mmproj::kAudioEmbeddingLength, mmproj::kAudioFeedForwardLength,
        mmproj::kAudioBlockCount, mmproj::kAudioHeadCount, mmproj::kAudioLayerNormEps,
        mmproj::kAudioNumMelBins}) {
    const std::string path =
        WriteKeys("acfg_missing.gguf", [key](GgufWriter& w) { ASSERT_TRUE(w.Remove(key)); });
    const std::string msg = ErrorOf([&] { Read(path); });
    EXPECT_NE(msg.find(path + ": key '" + key + "' not found"), std::string::npos) << msg;
  }
}

TEST(Gemma4AudioConfig, KeysOfAnotherTypeThanLlamaCppReadsAreRefused) {
  struct Case {
    const char* key;
    GgufValue value;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {mmproj::kAudioBlockCount, GgufValue::I32(2), "has type i32, expected u32"},
      {mmproj::kAudioEmbeddingLength, GgufValue::U64(32), "has type u64, expected u32"},
      {mmproj::kAudioNumMelBins, GgufValue::U16(128), "has type u16, expected u32"},
      {mmproj::kAudioLayerNormEps, GgufValue::F64(1e-6), "has type f64, expected f32"},
  };
  for (const Case& k : cases) {
    const std::string path =
        WriteKeys("acfg_type.gguf", [&k](GgufWriter& w) { w.Set(k.key, k.value); });
    const std::string msg = ErrorOf([&] { Read(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("'") + k.key + "' " + k.expect), std::string::npos)
        << k.key << ": " << msg;
  }
}

TEST(Gemma4AudioConfig, InconsistentValuesAndOtherProjectorsAreRefused) {
  struct Case {
    std::function<void(GgufWriter&)> edit;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {[](GgufWriter& w) { w.SetU32(mmproj::kAudioHeadCount, 3); },
       "clip.audio.embedding_length 32 is not a multiple of clip.audio.attention.head_count 3"},
      {[](GgufWriter& w) { w.SetU32(mmproj::kAudioBlockCount, 0); },
       "clip.audio.block_count is 0, expected > 0"},
      {[](GgufWriter& w) { w.SetF32(mmproj::kAudioLayerNormEps, -1.0f); },
       "layer_norm_epsilon is -1"},
      {[](GgufWriter& w) { w.SetString(mmproj::kAudioProjectorType, "gemma4ua"); },
       "not supported yet"},
      {[](GgufWriter& w) { w.SetBool(mmproj::kHasAudio, false); }, "no encoder"},
  };
  for (const Case& k : cases) {
    const std::string path = WriteKeys("acfg_bad.gguf", k.edit);
    const std::string msg = ErrorOf([&] { Read(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(k.expect), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace tandem
