// The synthetic checkpoints' vision and audio towers (hf_tensor_builder.h): transformers'
// parameter names and shapes, the GGUF name each becomes in the mmproj, and config.json's
// vision_config and audio_config.
#include <string>
#include <utility>

#include "hf_tensor_builder.h"

namespace tandem::testing::hf_build {

using Json = nlohmann::json;

// transformers' Gemma4VisionModel parameters, and the embedder's projection into the text width.
void AddVisionTower(const HfSpec& s, Builder& b) {
  const HfVisionSpec& v = s.vision;
  const uint64_t d = v.hidden, p = v.patch, f = v.ff, q = uint64_t(v.heads) * v.head_dim;
  const std::string tower = "model.vision_tower.";
  b.AddMultimodal(tower + "patch_embedder.input_proj.weight", "v.patch_embd.weight", {d, 3 * p * p},
                  Kind::kMatrix);
  b.AddMultimodal(tower + "patch_embedder.position_embedding_table", "v.position_embd.weight",
                  {2, uint64_t(v.positions), d}, Kind::kTable);
  struct Linear {
    const char* hf;
    const char* gguf;
    uint64_t out, in;
  };
  const Linear linears[] = {
      {"self_attn.q_proj", "attn_q", q, d}, {"self_attn.k_proj", "attn_k", q, d},
      {"self_attn.v_proj", "attn_v", q, d}, {"self_attn.o_proj", "attn_out", d, q},
      {"mlp.gate_proj", "ffn_gate", f, d},  {"mlp.up_proj", "ffn_up", f, d},
      {"mlp.down_proj", "ffn_down", d, f}};
  for (int l = 0; l < v.layers; ++l) {
    const std::string hf = tower + "encoder.layers." + std::to_string(l) + ".";
    const std::string blk = "v.blk." + std::to_string(l) + ".";
    auto norm = [&](const char* name, const char* gguf, uint64_t n, Kind kind = Kind::kNorm) {
      b.AddMultimodal(hf + name, blk + gguf, {n}, kind);
    };
    norm("input_layernorm.weight", "ln1.weight", d);
    norm("self_attn.q_norm.weight", "attn_q_norm.weight", v.head_dim, Kind::kQkNorm);
    norm("self_attn.k_norm.weight", "attn_k_norm.weight", v.head_dim, Kind::kQkNorm);
    norm("post_attention_layernorm.weight", "attn_post_norm.weight", d);
    norm("pre_feedforward_layernorm.weight", "ln2.weight", d);
    norm("post_feedforward_layernorm.weight", "ffn_post_norm.weight", d);
    for (const Linear& lin : linears) {
      const std::string base = hf + lin.hf, gbase = blk + lin.gguf;
      b.AddMultimodal(base + ".linear.weight", gbase + ".weight", {lin.out, lin.in}, Kind::kMatrix);
      if (!v.clipped) continue;
      // One bound keeps transformers' initial +inf (a bound that never bites).
      const bool inf = l == v.layers - 1 && std::string(lin.gguf) == "ffn_down";
      b.AddMultimodal(base + ".input_min", gbase + ".input_min", {}, Kind::kClampMin);
      b.AddMultimodal(base + ".input_max", gbase + ".input_max", {},
                      inf ? Kind::kInfinity : Kind::kClampMax);
      b.AddMultimodal(base + ".output_min", gbase + ".output_min", {}, Kind::kClampMin);
      b.AddMultimodal(base + ".output_max", gbase + ".output_max", {}, Kind::kClampMax);
    }
  }
  if (v.standardize) {
    b.AddMultimodal(tower + "std_bias", "v.std_bias", {d}, Kind::kTable);
    b.AddMultimodal(tower + "std_scale", "v.std_scale", {d}, Kind::kScale);
  }
  b.AddMultimodal("model.embed_vision.embedding_projection.weight", "mm.input_projection.weight",
                  {uint64_t(s.hidden), d}, Kind::kMatrix);
}

// transformers' Gemma4AudioModel parameters (Gemma4AudioSubSampleConvProjection, Gemma4AudioLayer
// with its two Gemma4AudioFeedForward halves, Gemma4AudioAttention and Gemma4AudioLightConv1d,
// output_proj) and the audio embedder's projection into the text width, each with the GGUF name
// docs/audio.md gives it. per_dim_scale holds raw values around 0 (the file stores softplus).
void AddAudioTower(const HfSpec& s, Builder& b) {
  const HfAudioSpec& a = s.audio;
  const uint64_t d = a.hidden, c0 = a.channels0, c1 = a.channels1, o = a.output;
  const std::string tower = "model.audio_tower.";
  const std::string sub = tower + "subsample_conv_projection.";
  b.AddMultimodal(sub + "layer0.conv.weight", "a.conv1d.0.weight", {c0, 1, 3, 3}, Kind::kMatrix);
  b.AddMultimodal(sub + "layer0.norm.weight", "a.conv1d.0.norm.weight", {c0}, Kind::kNorm);
  b.AddMultimodal(sub + "layer1.conv.weight", "a.conv1d.1.weight", {c1, c0, 3, 3}, Kind::kMatrix);
  b.AddMultimodal(sub + "layer1.norm.weight", "a.conv1d.1.norm.weight", {c1}, Kind::kNorm);
  b.AddMultimodal(sub + "input_proj_linear.weight", "a.input_projection.weight", {d, (c0 / 4) * c1},
                  Kind::kMatrix);
  struct Linear {
    const char* hf;
    const char* gguf;
    uint64_t out, in;
  };
  const Linear linears[] = {{"feed_forward1.ffw_layer_1", "ffn_up", 4 * d, d},
                            {"feed_forward1.ffw_layer_2", "ffn_down", d, 4 * d},
                            {"self_attn.q_proj", "attn_q", d, d},
                            {"self_attn.k_proj", "attn_k", d, d},
                            {"self_attn.v_proj", "attn_v", d, d},
                            {"self_attn.post", "attn_out", d, d},
                            {"lconv1d.linear_start", "conv_pw1", 2 * d, d},
                            {"lconv1d.linear_end", "conv_pw2", d, d},
                            {"feed_forward2.ffw_layer_1", "ffn_up_1", 4 * d, d},
                            {"feed_forward2.ffw_layer_2", "ffn_down_1", d, 4 * d}};
  const std::pair<const char*, const char*> norms[] = {
      {"feed_forward1.pre_layer_norm.weight", "ffn_norm.weight"},
      {"feed_forward1.post_layer_norm.weight", "ffn_post_norm.weight"},
      {"norm_pre_attn.weight", "attn_pre_norm.weight"},
      {"norm_post_attn.weight", "attn_post_norm.weight"},
      {"lconv1d.pre_layer_norm.weight", "conv_norm.weight"},
      {"lconv1d.conv_norm.weight", "norm_conv.weight"},
      {"feed_forward2.pre_layer_norm.weight", "ffn_norm_1.weight"},
      {"feed_forward2.post_layer_norm.weight", "ffn_post_norm_1.weight"},
      {"norm_out.weight", "ln2.weight"}};
  for (int l = 0; l < a.layers; ++l) {
    const std::string hf = tower + "layers." + std::to_string(l) + ".";
    const std::string blk = "a.blk." + std::to_string(l) + ".";
    for (const auto& [name, gguf] : norms) b.AddMultimodal(hf + name, blk + gguf, {d}, Kind::kNorm);
    b.AddMultimodal(hf + "self_attn.relative_k_proj.weight", blk + "attn_k_rel.weight", {d, d},
                    Kind::kMatrix);
    b.AddMultimodal(hf + "self_attn.per_dim_scale", blk + "per_dim_scale.weight",
                    {d / uint64_t(a.heads)}, Kind::kTable);
    b.AddMultimodal(hf + "lconv1d.depthwise_conv1d.weight", blk + "conv_dw.weight", {d, 1, 5},
                    Kind::kMatrix);
    for (const Linear& lin : linears) {
      const std::string base = hf + lin.hf, gbase = blk + lin.gguf;
      b.AddMultimodal(base + ".linear.weight", gbase + ".weight", {lin.out, lin.in}, Kind::kMatrix);
      if (!a.clipped) continue;
      // One bound keeps transformers' initial +inf (a bound that never bites).
      const bool inf = l == 0 && std::string(lin.gguf) == "conv_pw2";
      b.AddMultimodal(base + ".input_min", gbase + ".input_min", {}, Kind::kClampMin);
      b.AddMultimodal(base + ".input_max", gbase + ".input_max", {}, Kind::kClampMax);
      b.AddMultimodal(base + ".output_min", gbase + ".output_min", {},
                      inf ? Kind::kNegInfinity : Kind::kClampMin);
      b.AddMultimodal(base + ".output_max", gbase + ".output_max", {}, Kind::kClampMax);
    }
  }
  b.AddMultimodal(tower + "output_proj.weight", "a.pre_encode.out.weight", {o, d}, Kind::kMatrix);
  b.AddMultimodal(tower + "output_proj.bias", "a.pre_encode.out.bias", {o}, Kind::kTable);
  b.AddMultimodal("model.embed_audio.embedding_projection.weight", "mm.a.input_projection.weight",
                  {uint64_t(s.hidden), o}, Kind::kMatrix);
}

// transformers' Gemma4AudioConfig fields, the fixed ones at their defaults.
Json AudioConfig(const HfAudioSpec& a) {
  return {{"model_type", "gemma4_audio"},
          {"hidden_size", a.hidden},
          {"num_hidden_layers", a.layers},
          {"num_attention_heads", a.heads},
          {"hidden_act", "silu"},
          {"subsampling_conv_channels", {a.channels0, a.channels1}},
          {"conv_kernel_size", 5},
          {"residual_weight", 0.5},
          {"attention_chunk_size", 12},
          {"attention_context_left", 13},
          {"attention_context_right", 0},
          {"attention_logit_cap", 50.0},
          {"attention_invalid_logits_value", -1.0e9},
          {"use_clipped_linears", a.clipped},
          {"rms_norm_eps", 1e-6},
          {"gradient_clipping", 1e10},
          {"output_proj_dims", a.output}};
}

Json VisionConfig(const HfVisionSpec& v) {
  return {{"model_type", "gemma4_vision"},
          {"hidden_size", v.hidden},
          {"intermediate_size", v.ff},
          {"num_hidden_layers", v.layers},
          {"num_attention_heads", v.heads},
          {"num_key_value_heads", v.heads},
          {"head_dim", v.head_dim},
          {"hidden_activation", "gelu_pytorch_tanh"},
          {"rms_norm_eps", 1e-6},
          {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", 100.0}}},
          {"pooling_kernel_size", v.pooling},
          {"patch_size", v.patch},
          {"position_embedding_size", v.positions},
          {"use_clipped_linears", v.clipped},
          {"standardize", v.standardize}};
}

}  // namespace tandem::testing::hf_build
