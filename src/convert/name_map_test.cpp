// Tests for the HF → GGUF name map: every rule, prefixes, skipped and unmapped names, and that
// the names of a full HF checkpoint land exactly on Gemma4TensorList for every preset.
#include "convert/name_map.h"

#include <gtest/gtest.h>

#include <set>

#include "model/gemma4/presets.h"
#include "model/gemma4/tensors.h"

namespace tandem {
namespace {

std::string Gguf(std::string_view hf, HfModelKind kind = HfModelKind::kTarget) {
  const HfTensorName m = MapHfTensorName(hf, kind);
  return m.role == HfTensorRole::kTensor ? m.gguf_name : "";
}

TEST(NameMapTest, MapsTextModelNames) {
  for (const char* prefix : {"model.language_model.", "model."}) {
    const std::string p = prefix;
    EXPECT_EQ(Gguf(p + "embed_tokens.weight"), "token_embd.weight");
    EXPECT_EQ(Gguf(p + "norm.weight"), "output_norm.weight");
    EXPECT_EQ(Gguf(p + "embed_tokens_per_layer.weight"), "per_layer_token_embd.weight");
    EXPECT_EQ(Gguf(p + "per_layer_model_projection.weight"), "per_layer_model_proj.weight");
    EXPECT_EQ(Gguf(p + "per_layer_projection_norm.weight"), "per_layer_proj_norm.weight");
    EXPECT_EQ(Gguf(p + "layers.12.self_attn.q_proj.weight"), "blk.12.attn_q.weight");
    EXPECT_EQ(Gguf(p + "layers.0.self_attn.k_norm.weight"), "blk.0.attn_k_norm.weight");
    EXPECT_EQ(Gguf(p + "layers.3.pre_feedforward_layernorm.weight"), "blk.3.ffn_norm.weight");
    EXPECT_EQ(Gguf(p + "layers.3.post_feedforward_layernorm.weight"), "blk.3.post_ffw_norm.weight");
    EXPECT_EQ(Gguf(p + "layers.3.per_layer_input_gate.weight"), "blk.3.inp_gate.weight");
    EXPECT_EQ(Gguf(p + "layers.3.per_layer_projection.weight"), "blk.3.proj.weight");
    EXPECT_EQ(Gguf(p + "layers.3.post_per_layer_input_norm.weight"), "blk.3.post_norm.weight");
  }
}

TEST(NameMapTest, AppliesLlamaCppFixups) {
  const std::string p = "model.language_model.layers.4.";
  EXPECT_EQ(Gguf(p + "layer_scalar"), "blk.4.layer_output_scale.weight");
  EXPECT_EQ(Gguf(p + "router.proj.weight"), "blk.4.ffn_gate_inp.weight");
  EXPECT_EQ(Gguf(p + "router.scale"), "blk.4.ffn_gate_inp.scale");
  EXPECT_EQ(Gguf(p + "router.per_expert_scale"), "blk.4.ffn_down_exps.scale");
  EXPECT_EQ(Gguf(p + "experts.gate_up_proj"), "blk.4.ffn_gate_up_exps.weight");
  EXPECT_EQ(Gguf(p + "experts.down_proj"), "blk.4.ffn_down_exps.weight");
  EXPECT_EQ(Gguf(p + "pre_feedforward_layernorm_2.weight"), "blk.4.pre_ffw_norm_2.weight");
  EXPECT_EQ(Gguf(p + "post_feedforward_layernorm_1.weight"), "blk.4.post_ffw_norm_1.weight");
  EXPECT_EQ(Gguf(p + "post_feedforward_layernorm_2.weight"), "blk.4.post_ffw_norm_2.weight");
  // Alternative spellings.
  EXPECT_EQ(Gguf(p + "moe.gate_up_proj"), "blk.4.ffn_gate_up_exps.weight");
  EXPECT_EQ(Gguf(p + "moe.down_proj"), "blk.4.ffn_down_exps.weight");
  EXPECT_EQ(Gguf(p + "moe.per_expert_scale"), "blk.4.ffn_down_exps.scale");
  const HfTensorName gate = MapHfTensorName(p + "moe.gate_proj", HfModelKind::kTarget);
  const HfTensorName up = MapHfTensorName(p + "experts.up_proj", HfModelKind::kTarget);
  EXPECT_EQ(gate.gguf_name, "blk.4.ffn_gate_up_exps.weight");
  EXPECT_EQ(gate.part, HfTensorPart::kExpertGate);
  EXPECT_EQ(up.part, HfTensorPart::kExpertUp);
  EXPECT_EQ(gate.layer, 4);
}

TEST(NameMapTest, AssistantTopLevelTensors) {
  const auto a = HfModelKind::kAssistant;
  EXPECT_EQ(Gguf("pre_projection.weight", a), "nextn.pre_projection.weight");
  EXPECT_EQ(Gguf("post_projection.weight", a), "nextn.post_projection.weight");
  EXPECT_EQ(Gguf("masked_embedding.centroids.weight", a), "masked_embd_centroids.weight");
  EXPECT_EQ(Gguf("masked_embedding.token_ordering", a), "masked_embd_ordering");
  EXPECT_EQ(Gguf("model.layers.3.self_attn.o_proj.weight", a), "blk.3.attn_output.weight");
  EXPECT_EQ(Gguf("pre_projection.weight"), "");  // not a target tensor
}

TEST(NameMapTest, SkipsMultimodalAndTiedHeadAndReportsTheRest) {
  for (const char* name :
       {"model.vision_tower.encoder.layers.0.mlp.fc1.weight",
        "model.audio_tower.conformer.0.weight", "model.embed_vision.embedding_projection.weight",
        "model.embed_audio.embedding_projection.weight"}) {
    EXPECT_EQ(MapHfTensorName(name, HfModelKind::kTarget).role, HfTensorRole::kMultimodal) << name;
  }
  EXPECT_EQ(MapHfTensorName("lm_head.weight", HfModelKind::kTarget).role, HfTensorRole::kTiedHead);
  for (const char* name :
       {"model.layers.1.self_attn.qkv_proj.weight", "model.layers.x.mlp.gate_proj.weight",
        "model.layers.1", "transformer.h.0.attn.weight", "model.layers.-1.mlp.up_proj.weight",
        "model.layers.2.mlp.gate_proj.bias"}) {
    EXPECT_EQ(MapHfTensorName(name, HfModelKind::kTarget).role, HfTensorRole::kUnmapped) << name;
  }
}

// The HF names of a checkpoint with `c`'s shape (written from the HF layout, not from the map).
std::vector<std::string> HfCheckpointNames(const Gemma4Config& c, const std::string& prefix) {
  std::vector<std::string> names = {prefix + "embed_tokens.weight", prefix + "norm.weight"};
  if (c.n_embd_per_layer > 0) {
    for (const char* n : {"embed_tokens_per_layer.weight", "per_layer_model_projection.weight",
                          "per_layer_projection_norm.weight"}) {
      names.push_back(prefix + n);
    }
  }
  for (int l = 0; l < c.n_layer; ++l) {
    const std::string p = prefix + "layers." + std::to_string(l) + ".";
    for (const char* n :
         {"input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.q_norm.weight",
          "self_attn.o_proj.weight", "post_attention_layernorm.weight",
          "pre_feedforward_layernorm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
          "mlp.down_proj.weight", "post_feedforward_layernorm.weight", "layer_scalar"}) {
      names.push_back(p + n);
    }
    if (c.layers[l].owns_kv) {
      names.push_back(p + "self_attn.k_proj.weight");
      names.push_back(p + "self_attn.k_norm.weight");
      if (c.layers[l].sliding || !c.full_v_equals_k) names.push_back(p + "self_attn.v_proj.weight");
    }
    if (c.n_embd_per_layer > 0) {
      for (const char* n : {"per_layer_input_gate.weight", "per_layer_projection.weight",
                            "post_per_layer_input_norm.weight"}) {
        names.push_back(p + n);
      }
    }
    if (c.n_expert > 0) {
      for (const char* n :
           {"router.proj.weight", "router.scale", "router.per_expert_scale",
            "pre_feedforward_layernorm_2.weight", "post_feedforward_layernorm_1.weight",
            "post_feedforward_layernorm_2.weight", "experts.gate_up_proj", "experts.down_proj"}) {
        names.push_back(p + n);
      }
    }
  }
  return names;
}

TEST(NameMapTest, CheckpointNamesCoverTheTensorListOfEveryPreset) {
  for (const std::string& preset : Gemma4PresetNames()) {
    if (preset.rfind("tiny", 0) != 0) continue;
    const Gemma4Config c = Gemma4Preset(preset);
    std::set<std::string> want;
    for (const Gemma4TensorSpec& s : Gemma4TensorList(c)) {
      if (s.role != TensorRole::kRopeFreqs) want.insert(s.name);
    }
    std::set<std::string> got;
    for (const std::string& hf : HfCheckpointNames(c, "model.language_model.")) {
      const HfTensorName m = MapHfTensorName(hf, HfModelKind::kTarget);
      ASSERT_EQ(m.role, HfTensorRole::kTensor) << preset << ": " << hf;
      EXPECT_TRUE(got.insert(m.gguf_name).second) << preset << ": two names give " << m.gguf_name;
    }
    EXPECT_EQ(got, want) << preset;
  }
}

}  // namespace
}  // namespace tandem
