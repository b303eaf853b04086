// Gemma4VisionConfig: the clip.vision.* keys with llama.cpp's exact types, round trips through
// the writer, and a clear error for every missing, mistyped or inconsistent key.
#include "encoders/gemma4v/config.h"

#include <gtest/gtest.h>

#include "encoders/encoders_test_util.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/mmproj_file.h"
#include "encoders/mmproj_keys.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::TempPath;

// A file with the keys of `c` (then `edit`), and a position table of c.n_pos rows (no other
// tensors: enough for the config).
std::string WriteKeys(const std::string& name, const Gemma4VisionConfig& c,
                      const std::function<void(GgufWriter&)>& edit = nullptr) {
  GgufWriter w;
  w.SetString("general.architecture", "clip");
  c.WriteToGguf(w);
  if (edit) edit(w);
  const uint64_t ne[] = {uint64_t(c.n_embd), uint64_t(c.n_pos), 2};
  w.AddTensor("v.position_embd.weight", TensorType::kF32, ne,
              std::vector<uint8_t>(c.n_embd * c.n_pos * 2 * sizeof(float)));
  const std::string path = TempPath(name);
  w.Write(path);
  return path;
}

Gemma4VisionConfig Read(const std::string& path) {
  return Gemma4VisionConfig::FromMmproj(*MmprojFile::Open(path));
}

TEST(Gemma4VisionConfig, EveryPresetRoundTripsItsKeys) {
  for (const std::string& name : Gemma4VisionPresetNames()) {
    Gemma4VisionConfig c = Gemma4VisionPreset(name);
    c.n_pos = 4;  // a small table for the test; the real ones are read the same way
    c.clipped_linears = c.standardize = false;  // tensor-derived, not keys
    const Gemma4VisionConfig r = Read(WriteKeys("vcfg_" + name + ".gguf", c));
    EXPECT_EQ(r.n_embd, c.n_embd) << name;
    EXPECT_EQ(r.n_ff, c.n_ff) << name;
    EXPECT_EQ(r.n_layer, c.n_layer) << name;
    EXPECT_EQ(r.n_head, c.n_head) << name;
    EXPECT_EQ(r.n_head_kv, c.n_head_kv) << name;
    EXPECT_EQ(r.head_dim, c.head_dim) << name;
    EXPECT_EQ(r.patch_size, 16) << name;
    EXPECT_EQ(r.pooling, 3) << name;
    EXPECT_EQ(r.n_embd_text, c.n_embd_text) << name;
    EXPECT_EQ(r.image_size, 224) << name;
    EXPECT_EQ(r.eps, 1e-6f) << name;
    EXPECT_EQ(r.n_pos, 4) << name;
    EXPECT_EQ(r.image_mean, (std::array<float, 3>{0, 0, 0})) << name;
    EXPECT_EQ(r.image_std, (std::array<float, 3>{1, 1, 1})) << name;
    EXPECT_FALSE(r.use_gelu.has_value()) << name;
    EXPECT_EQ(r.rope_theta, 100.0f);
  }
}

TEST(Gemma4VisionConfig, RealShapesAreTheSpecs) {
  const Gemma4VisionConfig e2b = Gemma4VisionPreset("e2b");
  EXPECT_EQ(e2b.n_embd, 768);
  EXPECT_EQ(e2b.head_dim, 64);
  EXPECT_EQ(e2b.n_pos, 10240);
  EXPECT_TRUE(e2b.clipped_linears);
  EXPECT_FALSE(e2b.standardize);
  EXPECT_EQ(Gemma4VisionPreset("e4b").n_embd_text, 2560);
  const Gemma4VisionConfig big = Gemma4VisionPreset("31b");
  EXPECT_EQ(big.head_dim, 72);
  EXPECT_EQ(big.n_layer, 27);
  EXPECT_EQ(big.n_ff, 4304);
  EXPECT_EQ(big.n_embd_text, 5376);
  EXPECT_TRUE(big.standardize);
  EXPECT_FALSE(big.clipped_linears);
  EXPECT_EQ(Gemma4VisionPreset("26b-a4b").n_embd_text, 2816);
  const Gemma4VisionConfig tiny = Gemma4VisionPreset("tiny-e2b");
  EXPECT_EQ(tiny.n_embd, 32);
  EXPECT_EQ(tiny.head_dim, 16);
  EXPECT_EQ(tiny.n_embd_text, 128);
  EXPECT_TRUE(tiny.clipped_linears && tiny.standardize);
  EXPECT_NE(ErrorOf([] { Gemma4VisionPreset("12b"); }).find("valid: e2b"), std::string::npos);
}

TEST(Gemma4VisionConfig, OptionalKeysAreReadAndWrittenOnlyWhenSet) {
  Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
  c.pooling = 2;
  c.n_head_kv = 1;
  c.use_gelu = true;
  c.image_mean = {0.5f, 0.25f, 0.125f};
  const std::string path = WriteKeys("vcfg_optional.gguf", c);
  auto f = GgufFile::Open(path);
  EXPECT_EQ(f->GetU32(mmproj::kVisionScaleFactor), 2u);
  EXPECT_EQ(f->GetU32(mmproj::kVisionHeadCountKv), 1u);
  EXPECT_FALSE(f->HasKey(mmproj::kVisionHeadDim));  // Dv / heads
  EXPECT_FALSE(f->HasKey(mmproj::kUseSilu));
  const Gemma4VisionConfig r = Read(path);
  EXPECT_EQ(r.pooling, 2);
  EXPECT_EQ(r.n_head_kv, 1);
  EXPECT_EQ(r.use_gelu, std::optional<bool>(true));
  EXPECT_EQ(r.image_mean[2], 0.125f);

  // The default file (like llama.cpp's converter's) has none of them.
  auto plain = GgufFile::Open(WriteKeys("vcfg_plain.gguf", Gemma4VisionPreset("tiny")));
  for (const char* key : {mmproj::kVisionScaleFactor, mmproj::kVisionHeadCountKv,
                          mmproj::kVisionHeadDim, mmproj::kUseGelu, mmproj::kUseSilu}) {
    EXPECT_FALSE(plain->HasKey(key)) << key;
  }
  EXPECT_EQ(plain->GetString("clip.vision.projector_type"), "gemma4v");
  EXPECT_TRUE(plain->GetBool("clip.has_vision_encoder"));
}

TEST(Gemma4VisionConfig, MissingRequiredKeysAreNamed) {
  const Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
  for (const char* key :
       {mmproj::kVisionProjectionDim, mmproj::kVisionImageSize, mmproj::kVisionPatchSize,
        mmproj::kVisionEmbeddingLength, mmproj::kVisionFeedForwardLength, mmproj::kVisionBlockCount,
        mmproj::kVisionHeadCount, mmproj::kVisionLayerNormEps}) {
    const std::string path =
        WriteKeys("vcfg_missing.gguf", c, [key](GgufWriter& w) { ASSERT_TRUE(w.Remove(key)); });
    const std::string msg = ErrorOf([&] { Read(path); });
    EXPECT_NE(msg.find(path + ": key '" + key + "' not found"), std::string::npos) << msg;
  }
}

TEST(Gemma4VisionConfig, KeysOfAnotherTypeThanLlamaCppReadsAreRefused) {
  const Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
  struct Case {
    const char* key;
    GgufValue value;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {mmproj::kVisionBlockCount, GgufValue::I32(2), "has type i32, expected u32"},
      {mmproj::kVisionEmbeddingLength, GgufValue::U64(32), "has type u64, expected u32"},
      {mmproj::kVisionHeadCountKv, GgufValue::U16(2), "has type u16, expected u32"},
      {mmproj::kVisionScaleFactor, GgufValue::I32(3), "has type i32, expected u32"},
      {mmproj::kVisionLayerNormEps, GgufValue::F64(1e-6), "has type f64, expected f32"},
      {mmproj::kVisionImageMean, GgufValue::Array<double>(std::vector<double>{0, 0, 0}),
       "has type array[f64], expected array[f32]"},
      {mmproj::kVisionImageStd, GgufValue::Array<float>(std::vector<float>{1, 1}),
       "has 2 elements, expected at least 3"},
      {mmproj::kUseGelu, GgufValue::U32(1), "has type u32, expected bool"},
  };
  for (const Case& k : cases) {
    const std::string path =
        WriteKeys("vcfg_type.gguf", c, [&k](GgufWriter& w) { w.Set(k.key, k.value); });
    const std::string msg = ErrorOf([&] { Read(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("'") + k.key + "' " + k.expect), std::string::npos)
        << k.key << ": " << msg;
  }
}

TEST(Gemma4VisionConfig, InconsistentValuesAreRefused) {
  Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
  struct Case {
    std::function<void(GgufWriter&)> edit;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {[](GgufWriter& w) { w.SetU32(mmproj::kVisionHeadCount, 3); },
       "clip.vision.embedding_length 32 is not a multiple of clip.vision.attention.head_count 3"},
      {[](GgufWriter& w) { w.SetU32(mmproj::kVisionHeadDim, 18); },
       "head_dim 18 must be a multiple of 4"},
      {[](GgufWriter& w) { w.SetU32(mmproj::kVisionHeadCountKv, 3); },
       "head_count 2 is not a multiple of head_count_kv 3"},
      {[](GgufWriter& w) { w.SetU32(mmproj::kVisionBlockCount, 0); },
       "clip.vision.block_count is 0, expected > 0"},
      {[](GgufWriter& w) { w.SetF32(mmproj::kVisionLayerNormEps, 0.0f); },
       "layer_norm_epsilon is 0"},
      {[](GgufWriter& w) { w.SetString(mmproj::kVisionProjectorType, "gemma4uv"); },
       "not supported yet"},
  };
  for (const Case& k : cases) {
    const std::string path = WriteKeys("vcfg_bad.gguf", c, k.edit);
    const std::string msg = ErrorOf([&] { Read(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find(k.expect), std::string::npos) << msg;
  }
}

TEST(Gemma4VisionConfig, GeluOptionResolvesAgainstTheFile) {
  Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
  EXPECT_EQ(c.Activation(VisionGelu::kTanh), VisionActivation::kGeluTanh);
  EXPECT_EQ(c.Activation(VisionGelu::kQuick), VisionActivation::kGeluQuick);
  // llama.cpp's rule: GELU-quick unless the file says clip.use_gelu = true.
  EXPECT_EQ(c.Activation(VisionGelu::kFromFile), VisionActivation::kGeluQuick);
  c.use_gelu = false;
  EXPECT_EQ(c.Activation(VisionGelu::kFromFile), VisionActivation::kGeluQuick);
  c.use_gelu = true;
  EXPECT_EQ(c.Activation(VisionGelu::kFromFile), VisionActivation::kGeluTanh);
  c.use_gelu.reset();
  c.use_silu = true;
  EXPECT_NE(ErrorOf([&] {
              c.Activation(VisionGelu::kFromFile, "x.gguf");
            }).find("x.gguf: the file sets clip.use_silu = true"),
            std::string::npos);
  EXPECT_EQ(c.Activation(VisionGelu::kTanh), VisionActivation::kGeluTanh);
}

TEST(Gemma4VisionConfig, TokensNeedWholePooledCellsInsideThePositionTable) {
  const Gemma4VisionConfig c = Gemma4VisionPreset("tiny");  // 64 positions
  EXPECT_EQ(c.Tokens(48, 48), 1);
  EXPECT_EQ(c.Tokens(96, 144), 6);
  EXPECT_EQ(c.Tokens(1024 - 16, 48), 21);
  EXPECT_NE(ErrorOf([&] { c.Tokens(50, 48); })
                .find("image width 50 is not a positive multiple "
                      "of 48"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { c.Tokens(48, 0); }).find("height 0"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { c.Tokens(48, 1056); })
                .find("66 patches, more than the position "
                      "table's 64"),
            std::string::npos);
  EXPECT_EQ(Gemma4VisionPreset("e2b").Tokens(672, 960), 280);
}

}  // namespace
}  // namespace tandem
