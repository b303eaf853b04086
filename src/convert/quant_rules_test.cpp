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
  EXPECT_EQ(ParseQuantPreset("iq4_xs"), QuantPreset::kIQ4_XS);
  EXPECT_EQ(ParseQuantPreset("Q3_K_L"), QuantPreset::kQ3_K_L);
  // llama_ftype numbers (docs/formats.md § File types).
  const std::pair<QuantPreset, uint32_t> ftypes[] = {
      {QuantPreset::kQ2_K, 10},   {QuantPreset::kQ3_K_S, 11}, {QuantPreset::kQ3_K_M, 12},
      {QuantPreset::kQ3_K_L, 13}, {QuantPreset::kQ5_K_S, 16}, {QuantPreset::kIQ4_NL, 25},
      {QuantPreset::kIQ4_XS, 30}};
  for (auto [preset, ftype] : ftypes) EXPECT_EQ(GetQuantPresetInfo(preset).file_type, ftype);
  EXPECT_EQ(QuantPresets().size(), 18u);
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

// The presets without an importance matrix on Gemma 4 E2B's real table: 35 layers (n/16 = 2,
// n/8 = 4), attn_v on the 15 KV-owning layers 0..14, 8 query heads per KV head, every row a
// multiple of 256. Expected types written from docs/formats.md § Quantization presets.
TEST(QuantRulesTest, PresetMixesOnE2B) {
  const Gemma4Config c = Gemma4Preset("e2b");
  const auto table = Table(c);
  struct Want {
    QuantPreset preset;
    T base;                        // every other quantized matrix
    T attn_v_0_1, attn_v_2;        // attn_v on layers 0-1, and from layer 2
    T down_0_1, down_2_3, down_4;  // ffn_down on layers 0-1, 2-3, and from 4
    T attn_output;
  };
  const Want wants[] = {
      {QuantPreset::kQ2_K, T::kQ2_K, T::kQ4_K, T::kQ4_K, T::kQ3_K, T::kQ3_K, T::kQ3_K, T::kQ3_K},
      {QuantPreset::kQ3_K_S, T::kQ3_K, T::kQ3_K, T::kQ3_K, T::kQ3_K, T::kQ3_K, T::kQ3_K, T::kQ3_K},
      {QuantPreset::kQ3_K_M, T::kQ3_K, T::kQ5_K, T::kQ4_K, T::kQ5_K, T::kQ4_K, T::kQ4_K, T::kQ4_K},
      {QuantPreset::kQ3_K_L, T::kQ3_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K},
      {QuantPreset::kQ5_K_S, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K},
      {QuantPreset::kIQ4_NL, T::kIQ4_NL, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kIQ4_NL,
       T::kIQ4_NL},
      {QuantPreset::kIQ4_XS, T::kIQ4_XS, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kQ5_K, T::kIQ4_XS,
       T::kIQ4_XS},
  };
  for (const Want& w : wants) {
    const std::string preset(GetQuantPresetInfo(w.preset).name);
    const auto got = Choose(table, w.preset, {c.n_layer, 0, 8});
    EXPECT_EQ(got.at("token_embd.weight").type, T::kQ6_K) << preset;  // the tied head
    EXPECT_EQ(got.at("per_layer_token_embd.weight").type, T::kQ6_K) << preset;
    EXPECT_EQ(got.at("per_layer_model_proj.weight").type, T::kF16) << preset;
    EXPECT_EQ(got.at("rope_freqs.weight").type, T::kF32) << preset;
    for (int l = 0; l < c.n_layer; ++l) {
      if (l < 15) {
        EXPECT_EQ(got.at(Blk(l, "attn_v.weight")).type, l < 2 ? w.attn_v_0_1 : w.attn_v_2)
            << preset << " " << l;
      } else {
        EXPECT_EQ(got.count(Blk(l, "attn_v.weight")), 0u);
      }
      EXPECT_EQ(got.at(Blk(l, "ffn_down.weight")).type, l < 2   ? w.down_0_1
                                                        : l < 4 ? w.down_2_3
                                                                : w.down_4)
          << preset << " " << l;
      EXPECT_EQ(got.at(Blk(l, "attn_output.weight")).type, w.attn_output) << preset << " " << l;
      for (const char* name : {"attn_q.weight", "ffn_gate.weight", "ffn_up.weight",
                               "inp_gate.weight", "proj.weight"}) {
        EXPECT_EQ(got.at(Blk(l, name)).type, w.base) << preset << " " << name << " " << l;
      }
      if (l < 15) {
        EXPECT_EQ(got.at(Blk(l, "attn_k.weight")).type, w.base) << preset << " " << l;
      }
      EXPECT_EQ(got.at(Blk(l, "attn_norm.weight")).type, T::kF32) << preset << " " << l;
    }
    for (const auto& [name, choice] : got) EXPECT_FALSE(choice.fallback) << preset << " " << name;
  }
}

// Q2_K's attn_v is Q3_K, and IQ4_*'s stays in the preset's type, when fewer than 4 query heads
// share a KV head.
TEST(QuantRulesTest, GroupedQueryRatioRules) {
  const auto table = Table(Dense(8, 256));
  for (int gqa : {0, 2, 3}) {
    EXPECT_EQ(Choose(table, QuantPreset::kQ2_K, {8, 0, gqa}).at(Blk(3, "attn_v.weight")).type,
              T::kQ3_K);
    EXPECT_EQ(Choose(table, QuantPreset::kIQ4_XS, {8, 0, gqa}).at(Blk(3, "attn_v.weight")).type,
              T::kIQ4_XS);
  }
  EXPECT_EQ(Choose(table, QuantPreset::kQ2_K, {8, 0, 4}).at(Blk(3, "attn_v.weight")).type,
            T::kQ4_K);
  EXPECT_EQ(Choose(table, QuantPreset::kIQ4_NL, {8, 0, 4}).at(Blk(3, "attn_v.weight")).type,
            T::kQ5_K);
}

TEST(QuantRulesTest, NewPresetsFallBackAndEightExperts) {
  const Gemma4Config c = Gemma4Preset("tiny-e2b");  // n_embd 128
  const auto q2 = Choose(Table(c), QuantPreset::kQ2_K, {c.n_layer, 0, 4});
  EXPECT_EQ(q2.at(Blk(1, "attn_q.weight")).type, T::kQ4_0);  // Q2_K -> Q4_0
  EXPECT_TRUE(q2.at(Blk(1, "attn_q.weight")).fallback);
  EXPECT_EQ(q2.at(Blk(1, "ffn_down.weight")).type, T::kQ3_K);  // its rows (n_ff 256) fit
  EXPECT_EQ(q2.at(Blk(1, "attn_v.weight")).type, T::kQ5_0);    // Q4_K -> Q5_0
  const auto xs = Choose(Table(c), QuantPreset::kIQ4_XS, {c.n_layer, 0, 4});
  EXPECT_EQ(xs.at(Blk(1, "attn_q.weight")).type, T::kIQ4_NL);  // IQ4_XS -> IQ4_NL
  EXPECT_TRUE(xs.at(Blk(1, "attn_q.weight")).fallback);
  const auto nl = Choose(Table(c), QuantPreset::kIQ4_NL, {c.n_layer, 0, 4});
  EXPECT_EQ(nl.at(Blk(1, "attn_q.weight")).type, T::kIQ4_NL);  // 128 fits its 32-value blocks
  EXPECT_FALSE(nl.at(Blk(1, "attn_q.weight")).fallback);
  // IQ4_NL has no fallback, like the legacy types.
  std::vector<QuantTensorDesc> odd = {{"blk.0.attn_q.weight", T::kF16, {48, 64}}};
  EXPECT_THROW(Choose(odd, QuantPreset::kIQ4_NL, {1, 0, 0}), Error);

  // Eight experts: attn_v and attn_k in Q8_0 for every preset; attn_output in Q5_K for Q2_K,
  // Q3_K_S, Q3_K_M and IQ4_*, left in the preset's type for Q3_K_L and Q5_K_S.
  const auto table = Table(Dense(4, 256));
  const std::pair<QuantPreset, T> outputs[] = {
      {QuantPreset::kQ2_K, T::kQ5_K},   {QuantPreset::kQ3_K_S, T::kQ5_K},
      {QuantPreset::kQ3_K_M, T::kQ5_K}, {QuantPreset::kQ3_K_L, T::kQ3_K},
      {QuantPreset::kQ5_K_S, T::kQ5_K}, {QuantPreset::kIQ4_NL, T::kQ5_K},
      {QuantPreset::kIQ4_XS, T::kQ5_K}};
  for (auto [preset, want] : outputs) {
    const auto got = Choose(table, preset, {4, 8, 8});
    EXPECT_EQ(got.at(Blk(1, "attn_v.weight")).type, T::kQ8_0);
    EXPECT_EQ(got.at(Blk(1, "attn_k.weight")).type, T::kQ8_0);
    EXPECT_EQ(got.at(Blk(1, "attn_output.weight")).type, want) << GetQuantPresetInfo(preset).name;
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
