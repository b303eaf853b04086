// Tests for the HF → mmproj name map: transformers' audio names land on llama.cpp's gemma4a names
// (the name traps spelled out), and every tensor of the vision and audio tensor lists has a
// source name that maps back onto it.
#include "convert/mmproj_name_map.h"

#include <gtest/gtest.h>

#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4a/tensors.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/gemma4v/tensors.h"

namespace tandem {
namespace {

std::string Audio(std::string_view hf) {
  const HfMmprojName m = MapHfMmprojName(hf);
  return m.role == HfMmprojRole::kAudio ? m.gguf_name : "";
}

TEST(MmprojNameMapTest, MapsTransformersAudioNames) {
  for (const char* prefix : {"model.audio_tower.", "audio_tower."}) {
    const std::string t = prefix;
    const std::string l = t + "layers.3.";
    EXPECT_EQ(Audio(t + "subsample_conv_projection.layer0.conv.weight"), "a.conv1d.0.weight");
    EXPECT_EQ(Audio(t + "subsample_conv_projection.layer1.norm.weight"), "a.conv1d.1.norm.weight");
    EXPECT_EQ(Audio(t + "subsample_conv_projection.input_proj_linear.weight"),
              "a.input_projection.weight");
    EXPECT_EQ(Audio(t + "output_proj.weight"), "a.pre_encode.out.weight");
    EXPECT_EQ(Audio(t + "output_proj.bias"), "a.pre_encode.out.bias");
    // Feed-forward halves: feed_forward1 → ffn_*, feed_forward2 → ffn_*_1.
    EXPECT_EQ(Audio(l + "feed_forward1.pre_layer_norm.weight"), "a.blk.3.ffn_norm.weight");
    EXPECT_EQ(Audio(l + "feed_forward1.ffw_layer_1.linear.weight"), "a.blk.3.ffn_up.weight");
    EXPECT_EQ(Audio(l + "feed_forward1.ffw_layer_2.linear.weight"), "a.blk.3.ffn_down.weight");
    EXPECT_EQ(Audio(l + "feed_forward1.post_layer_norm.weight"), "a.blk.3.ffn_post_norm.weight");
    EXPECT_EQ(Audio(l + "feed_forward2.pre_layer_norm.weight"), "a.blk.3.ffn_norm_1.weight");
    EXPECT_EQ(Audio(l + "feed_forward2.ffw_layer_1.linear.weight"), "a.blk.3.ffn_up_1.weight");
    EXPECT_EQ(Audio(l + "feed_forward2.ffw_layer_2.input_min"), "a.blk.3.ffn_down_1.input_min");
    EXPECT_EQ(Audio(l + "feed_forward2.post_layer_norm.weight"), "a.blk.3.ffn_post_norm_1.weight");
    // Attention.
    EXPECT_EQ(Audio(l + "norm_pre_attn.weight"), "a.blk.3.attn_pre_norm.weight");
    EXPECT_EQ(Audio(l + "self_attn.q_proj.linear.weight"), "a.blk.3.attn_q.weight");
    EXPECT_EQ(Audio(l + "self_attn.k_proj.weight"), "a.blk.3.attn_k.weight");
    EXPECT_EQ(Audio(l + "self_attn.post.linear.weight"), "a.blk.3.attn_out.weight");
    EXPECT_EQ(Audio(l + "self_attn.post.output_max"), "a.blk.3.attn_out.output_max");
    EXPECT_EQ(Audio(l + "self_attn.relative_k_proj.weight"), "a.blk.3.attn_k_rel.weight");
    EXPECT_EQ(Audio(l + "self_attn.per_dim_scale"), "a.blk.3.per_dim_scale.weight");
    EXPECT_EQ(Audio(l + "norm_post_attn.weight"), "a.blk.3.attn_post_norm.weight");
    // Conv module: the pre-norm is conv_norm, the post-conv norm norm_conv.
    EXPECT_EQ(Audio(l + "lconv1d.pre_layer_norm.weight"), "a.blk.3.conv_norm.weight");
    EXPECT_EQ(Audio(l + "lconv1d.conv_norm.weight"), "a.blk.3.norm_conv.weight");
    EXPECT_EQ(Audio(l + "lconv1d.linear_start.linear.weight"), "a.blk.3.conv_pw1.weight");
    EXPECT_EQ(Audio(l + "lconv1d.linear_end.linear.weight"), "a.blk.3.conv_pw2.weight");
    EXPECT_EQ(Audio(l + "lconv1d.depthwise_conv1d.weight"), "a.blk.3.conv_dw.weight");
    EXPECT_EQ(Audio(l + "norm_out.weight"), "a.blk.3.ln2.weight");
  }
  EXPECT_EQ(Audio("model.embed_audio.embedding_projection.weight"), "mm.a.input_projection.weight");
}

TEST(MmprojNameMapTest, AudioNamesWithoutAMapping) {
  EXPECT_EQ(MapHfMmprojName("model.audio_tower.rel_pos_enc.inv_timescales").role,
            HfMmprojRole::kDropped);
  EXPECT_EQ(MapHfMmprojName("model.audio_tower.layers.0.self_attn.softcap").role,
            HfMmprojRole::kDropped);
  for (const char* name : {"model.audio_tower.layers.0.self_attn.relative_k_proj.input_min",
                           "model.audio_tower.layers.x.norm_out.weight",
                           "model.audio_tower.subsample_conv_projection.layer0.conv.bias",
                           "model.embed_audio.embedding_pre_projection_norm.weight"}) {
    EXPECT_EQ(MapHfMmprojName(name).role, HfMmprojRole::kUnmapped) << name;
    EXPECT_TRUE(IsMultimodalTensorName(name)) << name;
  }
  EXPECT_EQ(MapHfMmprojName("model.language_model.layers.0.mlp.up_proj.weight").role,
            HfMmprojRole::kNotMultimodal);
}

// Every GGUF tensor of a tower has a transformers source name, and that name maps back to it.
TEST(MmprojNameMapTest, EveryTensorOfBothListsRoundTrips) {
  Gemma4VisionConfig vision = Gemma4VisionPreset("tiny");
  vision.clipped_linears = vision.standardize = vision.layer_scale = true;
  std::vector<std::pair<std::string, HfMmprojRole>> names;
  for (const VisionTensorSpec& s : Gemma4VisionTensorList(vision)) {
    names.emplace_back(s.name, HfMmprojRole::kVision);
  }
  for (const AudioTensorSpec& s : Gemma4AudioTensorList(Gemma4AudioPreset("tiny"))) {
    names.emplace_back(s.name, HfMmprojRole::kAudio);
  }
  for (const auto& [gguf, role] : names) {
    const std::string hf = HfMmprojSourceName(gguf);
    ASSERT_FALSE(hf.empty()) << gguf;
    const HfMmprojName back = MapHfMmprojName(hf);
    EXPECT_EQ(back.role, role) << gguf << " <- " << hf;
    EXPECT_EQ(back.gguf_name, gguf) << hf;
  }
  EXPECT_EQ(HfMmprojSourceName("a.blk.0.per_dim_k_scale.weight"), "");
  EXPECT_EQ(HfMmprojSourceName("mm.a.soft_emb_norm.weight"), "");
}

}  // namespace
}  // namespace tandem
