#include "convert/mmproj_name_map.h"

#include <charconv>
#include <span>

#include "encoders/clipped_linear.h"

namespace tandem {
namespace {

struct Rule {
  const char* hf;
  const char* gguf;
};

// ---- Vision: transformers' Gemma4VisionModel under `vision_tower.`.

// Tower-wide tensors, after `vision_tower.`.
constexpr Rule kVisionTowerRules[] = {
    {"patch_embedder.input_proj.weight", "v.patch_embd.weight"},
    {"patch_embedder.position_embedding_table", "v.position_embd.weight"},
    {"patch_embedder.position_embedding_table.weight", "v.position_embd.weight"},
    {"std_bias", "v.std_bias"},
    {"std_scale", "v.std_scale"},
};

// Per-layer tensors that are not clippable linears, after `encoder.layers.N.`.
constexpr Rule kVisionLayerRules[] = {
    {"input_layernorm.weight", "ln1.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"post_attention_layernorm.weight", "attn_post_norm.weight"},
    {"pre_feedforward_layernorm.weight", "ln2.weight"},
    {"post_feedforward_layernorm.weight", "ffn_post_norm.weight"},
    {"layer_scalar", "out_scale.weight"},
    {"layer_scalar.weight", "out_scale.weight"},
};

// The clippable linears of a layer (kVisionLinears).
constexpr Rule kVisionLinearRules[] = {
    {"self_attn.q_proj", "attn_q"}, {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"}, {"self_attn.o_proj", "attn_out"},
    {"mlp.gate_proj", "ffn_gate"},  {"mlp.up_proj", "ffn_up"},
    {"mlp.down_proj", "ffn_down"},
};

// Non-persistent buffers, should a checkpoint carry them: suffixes after `vision_tower.`.
constexpr const char* kVisionDropped[] = {"rotary_emb.inv_freq"};

// ---- Audio: transformers' Gemma4AudioModel under `audio_tower.`.

constexpr Rule kAudioTowerRules[] = {
    {"subsample_conv_projection.layer0.conv.weight", "a.conv1d.0.weight"},
    {"subsample_conv_projection.layer0.norm.weight", "a.conv1d.0.norm.weight"},
    {"subsample_conv_projection.layer1.conv.weight", "a.conv1d.1.weight"},
    {"subsample_conv_projection.layer1.norm.weight", "a.conv1d.1.norm.weight"},
    {"subsample_conv_projection.input_proj_linear.weight", "a.input_projection.weight"},
    {"output_proj.weight", "a.pre_encode.out.weight"},
    {"output_proj.bias", "a.pre_encode.out.bias"},
};

// After `layers.N.`. The conv module's pre-norm becomes conv_norm and its norm after the
// depthwise convolution norm_conv (llama.cpp's names, the reverse of what they suggest).
constexpr Rule kAudioLayerRules[] = {
    {"feed_forward1.pre_layer_norm.weight", "ffn_norm.weight"},
    {"feed_forward1.post_layer_norm.weight", "ffn_post_norm.weight"},
    {"norm_pre_attn.weight", "attn_pre_norm.weight"},
    {"self_attn.relative_k_proj.weight", "attn_k_rel.weight"},
    {"self_attn.per_dim_scale", "per_dim_scale.weight"},
    {"norm_post_attn.weight", "attn_post_norm.weight"},
    {"lconv1d.pre_layer_norm.weight", "conv_norm.weight"},
    {"lconv1d.depthwise_conv1d.weight", "conv_dw.weight"},
    {"lconv1d.conv_norm.weight", "norm_conv.weight"},
    {"feed_forward2.pre_layer_norm.weight", "ffn_norm_1.weight"},
    {"feed_forward2.post_layer_norm.weight", "ffn_post_norm_1.weight"},
    {"norm_out.weight", "ln2.weight"},
};

// The clippable linears of a layer (kAudioClippedLinears).
constexpr Rule kAudioLinearRules[] = {
    {"feed_forward1.ffw_layer_1", "ffn_up"},
    {"feed_forward1.ffw_layer_2", "ffn_down"},
    {"self_attn.q_proj", "attn_q"},
    {"self_attn.k_proj", "attn_k"},
    {"self_attn.v_proj", "attn_v"},
    {"self_attn.post", "attn_out"},
    {"lconv1d.linear_start", "conv_pw1"},
    {"lconv1d.linear_end", "conv_pw2"},
    {"feed_forward2.ffw_layer_1", "ffn_up_1"},
    {"feed_forward2.ffw_layer_2", "ffn_down_1"},
};

constexpr const char* kAudioDropped[] = {"rel_pos_enc.inv_timescales", "self_attn.softcap"};

// One tower and its embedder: where its names live on both sides.
struct Tower {
  HfMmprojRole role;
  std::string_view tower;     // HF prefix after `model.`
  std::string_view embedder;  // HF prefix of the multimodal embedder
  const char* embedder_gguf;  // GGUF name of embedding_projection.weight
  std::string_view layers;    // HF prefix of layer N, after `tower`
  std::string_view blk;       // GGUF prefix of layer N
  std::span<const Rule> tower_rules, layer_rules, linears;
  std::span<const char* const> dropped;  // suffixes of the name after `tower`
};

const Tower kTowers[] = {
    {HfMmprojRole::kVision, "vision_tower.", "embed_vision.", "mm.input_projection.weight",
     "encoder.layers.", "v.blk.", kVisionTowerRules, kVisionLayerRules, kVisionLinearRules,
     kVisionDropped},
    {HfMmprojRole::kAudio, "audio_tower.", "embed_audio.", "mm.a.input_projection.weight",
     "layers.", "a.blk.", kAudioTowerRules, kAudioLayerRules, kAudioLinearRules, kAudioDropped},
};

constexpr char kGemma3Projector[] = "multi_modal_projector.";

bool StripPrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// `rest` of a layer tensor → its name after the GGUF layer prefix, or empty.
std::string MapLayerTensor(const Tower& t, std::string_view rest) {
  for (const Rule& r : t.layer_rules) {
    if (rest == r.hf) return r.gguf;
  }
  for (const Rule& r : t.linears) {
    std::string_view tail = rest;
    if (!StripPrefix(tail, r.hf)) continue;
    if (tail == ".linear.weight" || tail == ".weight") return std::string(r.gguf) + ".weight";
    for (const char* suffix : kClampSuffixes) {
      if (tail == suffix) return r.gguf + std::string(suffix);
    }
  }
  return {};
}

// `name` (after the tower prefix) → its GGUF name, or kUnmapped / kDropped.
HfMmprojName MapTowerTensor(const Tower& t, std::string_view name) {
  HfMmprojName out;
  out.role = HfMmprojRole::kUnmapped;
  for (const char* suffix : t.dropped) {
    if (EndsWith(name, suffix)) {
      out.role = HfMmprojRole::kDropped;
      return out;
    }
  }
  for (const Rule& r : t.tower_rules) {
    if (name == r.hf) {
      out.role = t.role;
      out.gguf_name = r.gguf;
      return out;
    }
  }
  if (!StripPrefix(name, t.layers)) return out;
  const size_t dot = name.find('.');
  int layer = -1;
  if (dot == 0 || dot == std::string_view::npos || dot > 6) return out;
  auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
  if (ec != std::errc() || end != name.data() + dot || layer < 0) return out;
  const std::string suffix = MapLayerTensor(t, name.substr(dot + 1));
  if (suffix.empty()) return out;
  out.role = t.role;
  out.gguf_name = std::string(t.blk) + std::to_string(layer) + "." + suffix;
  return out;
}

// The HF name of `gguf_name` in tower `t`, or empty.
std::string SourceName(const Tower& t, std::string_view gguf_name) {
  const std::string model = "model.";
  if (gguf_name == t.embedder_gguf) {
    return model + std::string(t.embedder) + "embedding_projection.weight";
  }
  const std::string tower = model + std::string(t.tower);
  for (const Rule& r : t.tower_rules) {
    if (gguf_name == r.gguf) return tower + r.hf;
  }
  std::string_view name = gguf_name;
  if (!StripPrefix(name, t.blk)) return {};
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos) return {};
  const std::string layer = tower + std::string(t.layers) + std::string(name.substr(0, dot + 1));
  const std::string_view rest = name.substr(dot + 1);
  for (const Rule& r : t.layer_rules) {
    if (rest == r.gguf) return layer + r.hf;
  }
  for (const Rule& r : t.linears) {
    std::string_view tail = rest;
    if (!StripPrefix(tail, r.gguf)) continue;
    if (tail == ".weight") return layer + r.hf + ".linear.weight";
    for (const char* suffix : kClampSuffixes) {
      if (tail == suffix) return layer + r.hf + suffix;
    }
  }
  return {};
}

}  // namespace

HfMmprojName MapHfMmprojName(std::string_view hf_name) {
  std::string_view name = hf_name;
  StripPrefix(name, "model.");
  for (const Tower& t : kTowers) {
    std::string_view rest = name;
    if (StripPrefix(rest, t.tower)) return MapTowerTensor(t, rest);
    if (StripPrefix(rest, t.embedder)) {
      HfMmprojName out;
      out.role = HfMmprojRole::kUnmapped;
      if (rest == "embedding_projection.weight") {
        out.role = t.role;
        out.gguf_name = t.embedder_gguf;
      }
      return out;
    }
  }
  return {};
}

std::string HfMmprojSourceName(std::string_view gguf_name) {
  for (const Tower& t : kTowers) {
    std::string source = SourceName(t, gguf_name);
    if (!source.empty()) return source;
  }
  return {};
}

bool IsMultimodalTensorName(std::string_view hf_name) {
  if (MapHfMmprojName(hf_name).role != HfMmprojRole::kNotMultimodal) return true;
  std::string_view name = hf_name;
  StripPrefix(name, "model.");
  return name.substr(0, sizeof(kGemma3Projector) - 1) == kGemma3Projector;
}

}  // namespace tandem
