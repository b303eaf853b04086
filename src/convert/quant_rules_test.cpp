// Tests for llama-quantize's type mix: presets, use_more_bits layers, the tied head, expert
// models, fallbacks, kept tensors and order independence.
#include "convert/quant_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "base/error.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/tensors.h"

namespace tandem {
namespace {

using T = TensorType;

// The tensor table of `c` as a converter writes it (matrices in `wtype`, the rest F32).
std::vector<QuantTensorDesc> Table(const Gemma4Config& c, T wtype = T::kF16) {
  std::vector<QuantTensorDesc> out;
  for (const Gemma4TensorSpec& s : Gemma4TensorList(c)) {
    const bool matrix = s.role == TensorRole::kMatrix || s.role == TensorRole::kEmbedding;
    out.push_back({s.name,
                   matrix && s.name.find("ffn_gate_inp") == std::string::npos ? wtype : T::kF32,
                   s.ne});
  }
  return out;
}

// A dense model of `n_layer` layers, every layer owning KV, hidden size `d` (K-quant friendly).
Gemma4Config Dense(int n_layer, int d) {
  Gemma4Config c = Gemma4Preset("tiny-31b");
  c.n_embd = d;
  c.n_layer = n_layer;
  c.layers.resize(n_layer);
  for (int l = 0; l < n_layer; ++l) {
    c.layers[l].sliding = l % 2 == 0 && l != n_layer - 1;
    c.layers[l].n_head_kv = 4;
    c.layers[l].n_ff = 512;
  }
  c.full_v_equals_k = false;
  c.Derive("test");
  return c;
}

std::map<std::string, QuantChoice> Choose(const std::vector<QuantTensorDesc>& table,
                                          QuantPreset preset, QuantModelDesc model,
                                          std::set<std::string, std::less<>> keep = {}) {
  const std::vector<QuantChoice> choices = ChooseQuantTypes(table, preset, model, keep);
  std::map<std::string, QuantChoice> out;
  for (size_t i = 0; i < table.size(); ++i) out[table[i].name] = choices[i];
  return out;
}

std::string Blk(int l, const char* s) {
  return LayerTensorName(l, s);
}

TEST(QuantRulesTest, ParsesPresetNames) {
  EXPECT_EQ(ParseQuantPreset("q4_k_m"), QuantPreset::kQ4_K_M);
  EXPECT_EQ(ParseQuantPreset("Q8_0"), QuantPreset::kQ8_0);
  EXPECT_EQ(ParseQuantPreset("bf16"), QuantPreset::kBF16);
  EXPECT_FALSE(ParseQuantPreset("q4_k").has_value());
  EXPECT_FALSE(ParseQuantPreset("q4_k_mm").has_value());
  EXPECT_EQ(GetQuantPresetInfo(QuantPreset::kQ4_K_M).file_type, 15u);
  EXPECT_EQ(GetQuantPresetInfo(QuantPreset::kQ5_K_M).file_type, 17u);
  EXPECT_EQ(GetQuantPresetInfo(QuantPreset::kQ4_K_S).file_type, 14u);
  EXPECT_EQ(GetQuantPresetInfo(QuantPreset::kBF16).file_type, 32u);
  EXPECT_EQ(QuantPresets().size(), 11u);
}

TEST(QuantRulesTest, WhichTensorsAreQuantized) {
  EXPECT_TRUE(TensorAllowsQuantization({"blk.0.attn_q.weight", T::kF16, {256, 256}}));
  EXPECT_FALSE(TensorAllowsQuantization({"blk.0.attn_norm.weight", T::kF32, {256}}));
  EXPECT_FALSE(TensorAllowsQuantization({"blk.0.attn_q_norm.weight", T::kF32, {256, 1}}));
  EXPECT_FALSE(TensorAllowsQuantization({"blk.0.ffn_gate_inp.weight", T::kF32, {256, 8}}));
  EXPECT_FALSE(TensorAllowsQuantization({"per_layer_model_proj.weight", T::kF16, {256, 512}}));
  EXPECT_FALSE(TensorAllowsQuantization({"blk.0.ffn_gate_inp.scale", T::kF32, {256, 2}}));
  EXPECT_FALSE(TensorAllowsQuantization({"masked_embd_ordering", T::kI32, {512}}));
  EXPECT_TRUE(TensorAllowsQuantization({"masked_embd_centroids.weight", T::kF16, {256, 8}}));
}

TEST(QuantRulesTest, Q4KMGivesMoreBitsOnUseMoreBitsLayers) {
  const Gemma4Config c = Dense(8, 256);
  const auto got = Choose(Table(c), QuantPreset::kQ4_K_M, {8, 0});
  // use_more_bits(i, 8): i < 1, i >= 7, (i - 1) % 3 == 2 -> layers 0, 3, 6, 7.
  for (int l = 0; l < 8; ++l) {
    const T more = (l == 0 || l == 3 || l == 6 || l == 7) ? T::kQ6_K : T::kQ4_K;
    EXPECT_EQ(got.at(Blk(l, "attn_v.weight")).type, more) << l;
    EXPECT_EQ(got.at(Blk(l, "ffn_down.weight")).type, more) << l;
    EXPECT_EQ(got.at(Blk(l, "attn_q.weight")).type, T::kQ4_K) << l;
    EXPECT_EQ(got.at(Blk(l, "attn_k.weight")).type, T::kQ4_K) << l;
    EXPECT_EQ(got.at(Blk(l, "attn_output.weight")).type, T::kQ4_K) << l;
    EXPECT_EQ(got.at(Blk(l, "ffn_gate.weight")).type, T::kQ4_K) << l;
    EXPECT_EQ(got.at(Blk(l, "attn_norm.weight")).type, T::kF32) << l;
    EXPECT_EQ(got.at(Blk(l, "layer_output_scale.weight")).type, T::kF32) << l;
  }
  EXPECT_EQ(got.at("token_embd.weight").type, T::kQ6_K);  // tied head
  EXPECT_EQ(got.at("rope_freqs.weight").type, T::kF32);
  for (const auto& [name, choice] : got) EXPECT_FALSE(choice.fallback) << name;

  const auto q5 = Choose(Table(c), QuantPreset::kQ5_K_M, {8, 0});
  EXPECT_EQ(q5.at(Blk(3, "attn_v.weight")).type, T::kQ6_K);
  EXPECT_EQ(q5.at(Blk(4, "attn_v.weight")).type, T::kQ5_K);
  EXPECT_EQ(q5.at(Blk(6, "ffn_down.weight")).type, T::kQ6_K);
  EXPECT_EQ(q5.at(Blk(5, "ffn_down.weight")).type, T::kQ5_K);
}

TEST(QuantRulesTest, Q4KSBumpsTheFirstLayers) {
  const Gemma4Config c = Dense(16, 256);
  const auto got = Choose(Table(c), QuantPreset::kQ4_K_S, {16, 0});
  for (int l = 0; l < 16; ++l) {
    EXPECT_EQ(got.at(Blk(l, "attn_v.weight")).type, l < 4 ? T::kQ5_K : T::kQ4_K) << l;
    EXPECT_EQ(got.at(Blk(l, "ffn_down.weight")).type, l < 2 ? T::kQ5_K : T::kQ4_K) << l;
  }
}

TEST(QuantRulesTest, AttnVCountsOnlyTheLayersThatHaveIt) {
  // tiny-e2b: 3 KV-owning layers, so n = 3 and use_more_bits(i, 3) holds for i = 2 only.
  const Gemma4Config c = Gemma4Preset("tiny-e2b");
  const auto got = Choose(Table(c), QuantPreset::kQ4_K_M, {c.n_layer, 0});
  EXPECT_EQ(got.count(Blk(4, "attn_v.weight")), 0u);
  // D = 128 fits neither K-quant: Q6_K falls back to Q8_0, Q4_K to Q5_0.
  EXPECT_EQ(got.at(Blk(2, "attn_v.weight")).type, T::kQ8_0);
  EXPECT_TRUE(got.at(Blk(2, "attn_v.weight")).fallback);
  EXPECT_EQ(got.at(Blk(1, "attn_v.weight")).type, T::kQ5_0);
}

TEST(QuantRulesTest, FallsBackWhenRowsDoNotFitTheBlocks) {
  const Gemma4Config c = Gemma4Preset("tiny-e2b");  // n_embd 128
  const auto got = Choose(Table(c), QuantPreset::kQ4_K_M, {c.n_layer, 0});
  EXPECT_EQ(got.at(Blk(1, "attn_q.weight")).type, T::kQ5_0);  // Q4_K -> Q5_0
  EXPECT_TRUE(got.at(Blk(1, "attn_q.weight")).fallback);
  // The tied head has its own rule: a row that Q4_K's blocks do not fit takes Q8_0.
  EXPECT_EQ(got.at("token_embd.weight").type, T::kQ8_0);
  EXPECT_FALSE(got.at("token_embd.weight").fallback);
  // per_layer_token_embd counts as a token embedding (llama.cpp): the tied-head rule applies.
  EXPECT_EQ(got.at("per_layer_token_embd.weight").type, T::kQ8_0);
  EXPECT_EQ(got.at("per_layer_model_proj.weight").type, T::kF16);  // never quantized
  const auto q5 = Choose(Table(c), QuantPreset::kQ5_K_M, {c.n_layer, 0});
  EXPECT_EQ(q5.at(Blk(1, "attn_q.weight")).type, T::kQ5_1);  // Q5_K -> Q5_1
  // A legacy type has no fallback.
  std::vector<QuantTensorDesc> odd = {{"blk.0.attn_q.weight", T::kF16, {48, 64}}};
  EXPECT_THROW(Choose(odd, QuantPreset::kQ4_0, {1, 0}), Error);
  // ... unless the tensor is kept.
  EXPECT_EQ(Choose(odd, QuantPreset::kQ4_0, {1, 0}, {"blk.0.attn_q.weight"})
                .at("blk.0.attn_q.weight")
                .type,
            T::kF16);
  // Rows fitting neither Q6_K nor Q8_0 end as F16.
  std::vector<QuantTensorDesc> tiny = {{"blk.0.attn_v.weight", T::kF32, {16, 64}}};
  EXPECT_EQ(Choose(tiny, QuantPreset::kQ6_K, {1, 0}).at("blk.0.attn_v.weight").type, T::kF16);
}

TEST(QuantRulesTest, LegacyAndFloatPresets) {
  const Gemma4Config c = Dense(4, 256);
  const auto q8 = Choose(Table(c), QuantPreset::kQ8_0, {4, 0});
  EXPECT_EQ(q8.at("token_embd.weight").type, T::kQ8_0);
  EXPECT_EQ(q8.at(Blk(0, "attn_v.weight")).type, T::kQ8_0);
  const auto q4 = Choose(Table(c), QuantPreset::kQ4_0, {4, 0});
  EXPECT_EQ(q4.at("token_embd.weight").type, T::kQ6_K);  // the tied head gets Q6_K
  EXPECT_EQ(q4.at(Blk(0, "ffn_down.weight")).type, T::kQ4_0);
  const auto q6 = Choose(Table(c), QuantPreset::kQ6_K, {4, 0});
  EXPECT_EQ(q6.at(Blk(2, "ffn_up.weight")).type, T::kQ6_K);
  for (QuantPreset p : {QuantPreset::kF16, QuantPreset::kBF16}) {
    const T want = p == QuantPreset::kF16 ? T::kF16 : T::kBF16;
    const auto f = Choose(Table(c, T::kF32), p, {4, 0});
    EXPECT_EQ(f.at("token_embd.weight").type, want);
    EXPECT_EQ(f.at(Blk(1, "attn_v.weight")).type, want);
    EXPECT_EQ(f.at(Blk(1, "attn_norm.weight")).type, T::kF32);
  }
}

TEST(QuantRulesTest, UntiedOutputHead) {
  std::vector<QuantTensorDesc> t = Table(Dense(4, 256));
  t.push_back({"output.weight", T::kF16, {256, 512}});
  const auto got = Choose(t, QuantPreset::kQ4_K_M, {4, 0});
  EXPECT_EQ(got.at("output.weight").type, T::kQ6_K);
  EXPECT_EQ(got.at("token_embd.weight").type, T::kQ4_K);
}

TEST(QuantRulesTest, ExpertModels) {
  Gemma4Config c = Gemma4Preset("tiny-26b-a4b");
  const auto moe = Choose(Table(c), QuantPreset::kQ4_K_M, {c.n_layer, c.n_expert});
  // ffn_down_exps takes its layer from its name; use_more_bits(i, 6) holds for i = 2 and 5.
  EXPECT_EQ(moe.at(Blk(2, "ffn_down_exps.weight")).type, T::kQ8_0);  // Q6_K -> Q8_0 (64-wide)
  EXPECT_EQ(moe.at(Blk(5, "ffn_down.weight")).type, T::kQ8_0);
  EXPECT_EQ(moe.at(Blk(0, "ffn_down_exps.weight")).type, T::kQ5_0);  // Q4_K -> Q5_0
  EXPECT_EQ(moe.at(Blk(0, "ffn_gate_inp.weight")).type, T::kF32);
  // Eight experts: llama.cpp protects attention.
  const auto eight = Choose(Table(Dense(4, 256)), QuantPreset::kQ4_K_M, {4, 8});
  EXPECT_EQ(eight.at(Blk(1, "attn_v.weight")).type, T::kQ8_0);
  EXPECT_EQ(eight.at(Blk(1, "attn_k.weight")).type, T::kQ8_0);
  EXPECT_EQ(eight.at(Blk(1, "attn_output.weight")).type, T::kQ5_K);
  // An expert tensor whose layer cannot be read is an error.
  std::vector<QuantTensorDesc> bad = {{"ffn_down_exps.weight", T::kF16, {256, 256, 4}}};
  EXPECT_THROW(Choose(bad, QuantPreset::kQ4_K_M, {4, 4}), Error);
}

TEST(QuantRulesTest, KeepTypeAndOrderIndependence) {
  std::vector<QuantTensorDesc> t = Table(Dense(8, 256));
  const auto kept = Choose(t, QuantPreset::kQ4_K_M, {8, 0}, {"blk.3.attn_q.weight"});
  EXPECT_EQ(kept.at("blk.3.attn_q.weight").type, T::kF16);
  EXPECT_EQ(kept.at("blk.4.attn_q.weight").type, T::kQ4_K);
  const auto base = Choose(t, QuantPreset::kQ4_K_M, {8, 0});
  std::mt19937 rng(7);
  std::shuffle(t.begin(), t.end(), rng);
  const auto shuffled = Choose(t, QuantPreset::kQ4_K_M, {8, 0});
  for (const auto& [name, choice] : base) EXPECT_EQ(shuffled.at(name).type, choice.type) << name;
}

}  // namespace
}  // namespace tandem
