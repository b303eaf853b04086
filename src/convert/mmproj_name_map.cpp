#include "convert/mmproj_name_map.h"

#include <charconv>

#include "encoders/clipped_linear.h"
#include "encoders/gemma4v/tensors.h"

namespace tandem {
namespace {

struct Rule {
  const char* hf;
  const char* gguf;
};

// Tower-wide tensors, after `vision_tower.`.
constexpr Rule kTowerRules[] = {
    {"patch_embedder.input_proj.weight", "v.patch_embd.weight"},
    {"patch_embedder.position_embedding_table", "v.position_embd.weight"},
    {"patch_embedder.position_embedding_table.weight", "v.position_embd.weight"},
    {"std_bias", "v.std_bias"},
    {"std_scale", "v.std_scale"},
};

// Per-layer tensors that are not linears, after `encoder.layers.N.`.
constexpr Rule kLayerRules[] = {
    {"input_layernorm.weight", "ln1.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"post_attention_layernorm.weight", "attn_post_norm.weight"},
    {"pre_feedforward_layernorm.weight", "ln2.weight"},
    {"post_feedforward_layernorm.weight", "ffn_post_norm.weight"},
    {"layer_scalar", "out_scale.weight"},
    {"layer_scalar.weight", "out_scale.weight"},
};

// The clippable linears of a layer, in kVisionLinears order.
constexpr const char* kHfLinears[7] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                                       "self_attn.o_proj", "mlp.gate_proj",    "mlp.up_proj",
                                       "mlp.down_proj"};

constexpr char kVisionTower[] = "vision_tower.";
constexpr char kVisionEmbedder[] = "embed_vision.";
constexpr std::string_view kAudioPrefixes[] = {"audio_tower.", "embed_audio."};
constexpr char kGemma3Projector[] = "multi_modal_projector.";

bool StripPrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// `rest` of a layer tensor → its name after `v.blk.N.`, or empty.
std::string MapLayerTensor(std::string_view rest) {
  for (const Rule& r : kLayerRules) {
    if (rest == r.hf) return r.gguf;
  }
  for (int i = 0; i < 7; ++i) {
    std::string_view tail = rest;
    if (!StripPrefix(tail, kHfLinears[i])) continue;
    if (tail == ".linear.weight" || tail == ".weight")
      return std::string(kVisionLinears[i]) + ".weight";
    for (const char* suffix : kClampSuffixes) {
      if (tail == suffix) return kVisionLinears[i] + std::string(suffix);
    }
  }
  return {};
}

HfMmprojName MapVisionTower(std::string_view name) {
  HfMmprojName out;
  out.role = HfMmprojRole::kUnmapped;
  if (EndsWith(name, "rotary_emb.inv_freq")) {
    out.role = HfMmprojRole::kDropped;
    return out;
  }
  for (const Rule& r : kTowerRules) {
    if (name == r.hf) {
      out.role = HfMmprojRole::kVision;
      out.gguf_name = r.gguf;
      return out;
    }
  }
  if (!StripPrefix(name, "encoder.layers.")) return out;
  const size_t dot = name.find('.');
  int layer = -1;
  if (dot == 0 || dot == std::string_view::npos || dot > 6) return out;
  auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
  if (ec != std::errc() || end != name.data() + dot || layer < 0) return out;
  const std::string suffix = MapLayerTensor(name.substr(dot + 1));
  if (suffix.empty()) return out;
  out.role = HfMmprojRole::kVision;
  out.gguf_name = VisionLayerTensorName(layer, suffix);
  return out;
}

}  // namespace

HfMmprojName MapHfMmprojName(std::string_view hf_name) {
  std::string_view name = hf_name;
  StripPrefix(name, "model.");
  HfMmprojName out;
  if (StripPrefix(name, kVisionTower)) return MapVisionTower(name);
  if (StripPrefix(name, kVisionEmbedder)) {
    if (name == "embedding_projection.weight") {
      out.role = HfMmprojRole::kVision;
      out.gguf_name = "mm.input_projection.weight";
    } else {
      out.role = HfMmprojRole::kUnmapped;
    }
    return out;
  }
  for (std::string_view prefix : kAudioPrefixes) {
    if (StripPrefix(name, prefix)) {
      out.role = HfMmprojRole::kAudio;
      return out;
    }
  }
  return out;
}

std::string HfMmprojSourceName(std::string_view gguf_name) {
  const std::string tower = std::string("model.") + kVisionTower;
  if (gguf_name == "mm.input_projection.weight") {
    return std::string("model.") + kVisionEmbedder + "embedding_projection.weight";
  }
  for (const Rule& r : kTowerRules) {
    if (gguf_name == r.gguf) return tower + r.hf;
  }
  std::string_view name = gguf_name;
  if (!StripPrefix(name, "v.blk.")) return {};
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos) return {};
  const std::string layer = tower + "encoder.layers." + std::string(name.substr(0, dot + 1));
  const std::string_view rest = name.substr(dot + 1);
  for (const Rule& r : kLayerRules) {
    if (rest == r.gguf) return layer + r.hf;
  }
  for (int i = 0; i < 7; ++i) {
    std::string_view tail = rest;
    if (!StripPrefix(tail, kVisionLinears[i])) continue;
    if (tail == ".weight") return layer + kHfLinears[i] + ".linear.weight";
    for (const char* suffix : kClampSuffixes) {
      if (tail == suffix) return layer + kHfLinears[i] + suffix;
    }
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
