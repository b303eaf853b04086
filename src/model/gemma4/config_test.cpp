#include "model/gemma4/config.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "gguf/gguf_reader.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/tensors.h"

namespace tandem {
namespace {

const std::string kFixture =
    std::string(TANDEM_SHARED_DIR) + "/fixtures/llamacpp-tiny/tiny-gemma4-f32.gguf";

void ExpectSameConfig(const Gemma4Config& a, const Gemma4Config& b) {
  EXPECT_EQ(a.n_vocab, b.n_vocab);
  EXPECT_EQ(a.n_embd, b.n_embd);
  EXPECT_EQ(a.n_layer, b.n_layer);
  EXPECT_EQ(a.n_head, b.n_head);
  EXPECT_EQ(a.n_embd_per_layer, b.n_embd_per_layer);
  EXPECT_EQ(a.sliding_window, b.sliding_window);
  EXPECT_EQ(a.shared_kv_layers, b.shared_kv_layers);
  EXPECT_EQ(a.head_dim_full, b.head_dim_full);
  EXPECT_EQ(a.head_dim_swa, b.head_dim_swa);
  EXPECT_EQ(a.rope_base_full, b.rope_base_full);
  EXPECT_EQ(a.rope_base_swa, b.rope_base_swa);
  EXPECT_EQ(a.final_logit_softcap, b.final_logit_softcap);
  EXPECT_EQ(a.n_expert, b.n_expert);
  EXPECT_EQ(a.full_v_equals_k, b.full_v_equals_k);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t l = 0; l < a.layers.size(); ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    EXPECT_EQ(a.layers[l].sliding, b.layers[l].sliding);
    EXPECT_EQ(a.layers[l].head_dim, b.layers[l].head_dim);
    EXPECT_EQ(a.layers[l].n_head_kv, b.layers[l].n_head_kv);
    EXPECT_EQ(a.layers[l].n_ff, b.layers[l].n_ff);
    EXPECT_EQ(a.layers[l].owns_kv, b.layers[l].owns_kv);
    EXPECT_EQ(a.layers[l].kv_source, b.layers[l].kv_source);
  }
}

// The llama.cpp-written fixture is external truth for keys, tensor names and shapes.
TEST(Gemma4Config, LlamaCppFixtureMatchesTinyE2bPreset) {
  if (!std::filesystem::exists(kFixture)) GTEST_SKIP() << "fixture absent: " << kFixture;
  auto file = GgufFile::Open(kFixture);
  Gemma4Config config = Gemma4Config::FromGguf(*file);
  ExpectSameConfig(config, Gemma4Preset("tiny-e2b"));
  // KV sharing as the fixture README states: layers 3, 4 read layer 1; layer 5 reads layer 2.
  EXPECT_EQ(config.layers[3].kv_source, 1);
  EXPECT_EQ(config.layers[4].kv_source, 1);
  EXPECT_EQ(config.layers[5].kv_source, 2);

  auto list = Gemma4TensorList(config);
  size_t found = 0;
  for (const auto& spec : list) {
    const TensorInfo* info = file->FindTensor(spec.name);
    if (!info) {
      EXPECT_FALSE(spec.required) << spec.name;
      continue;
    }
    ++found;
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(info->ne[i], i < spec.ne.size() ? spec.ne[i] : 1)
          << spec.name << " ne[" << i << "]";
    }
  }
  EXPECT_EQ(found, file->tensors().size()) << "the fixture has tensors our list does not name";
}

TEST(Gemma4Config, EveryPresetRoundTripsThroughGguf) {
  for (const char* name : {"tiny-e2b", "tiny-e4b", "tiny-26b-a4b", "tiny-31b"}) {
    SCOPED_TRACE(name);
    Gemma4Config preset = Gemma4Preset(name);
    std::string path = testing::TempDir() + "config_" + name + ".gguf";
    WriteRandomGemma4(preset, RandomModelOptions{}, path);
    auto file = GgufFile::Open(path);
    ExpectSameConfig(Gemma4Config::FromGguf(*file), preset);
    for (const auto& spec : Gemma4TensorList(preset)) {
      EXPECT_NE(file->FindTensor(spec.name), nullptr) << spec.name;
    }
    std::filesystem::remove(path);
  }
}

TEST(Gemma4Config, RealPresetsHaveTheSpecShapes) {
  Gemma4Config e2b = Gemma4Preset("e2b");
  EXPECT_EQ(e2b.n_layer_kv(), 15);
  EXPECT_EQ(e2b.layers[15].kv_source, 13);  // shared sliding layers read layer 13
  EXPECT_EQ(e2b.layers[19].kv_source, 14);  // shared full layers read layer 14
  EXPECT_EQ(e2b.layers[14].n_ff, 6144);
  EXPECT_EQ(e2b.layers[15].n_ff, 12288);
  EXPECT_FALSE(e2b.layers[4].sliding);
  Gemma4Config e4b = Gemma4Preset("e4b");
  EXPECT_EQ(e4b.layers[24].kv_source, 22);
  EXPECT_EQ(e4b.layers[29].kv_source, 23);
  Gemma4Config moe = Gemma4Preset("26b-a4b");
  EXPECT_EQ(moe.layers[0].n_head_kv, 8);
  EXPECT_EQ(moe.layers[5].n_head_kv, 2);
  EXPECT_TRUE(moe.full_v_equals_k);
  EXPECT_EQ(Gemma4Preset("31b").layers[59].n_head_kv, 4);
  EXPECT_THROW(Gemma4Preset("e3b"), Error);
}

TEST(Gemma4Config, InconsistentSharingIsAClearError) {
  std::string path = testing::TempDir() + "config_inconsistent.gguf";
  WriteRandomGemma4(Gemma4Preset("tiny-e2b"), RandomModelOptions{}, path);
  auto file = GgufFile::Open(path);
  Gemma4Config c = Gemma4Config::FromGguf(*file);
  c.shared_kv_layers = 6;
  try {
    c.Derive("test");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shared_kv_layers"), std::string::npos);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tandem
