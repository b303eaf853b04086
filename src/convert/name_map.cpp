#include "convert/name_map.h"

#include <charconv>

#include "convert/mmproj_name_map.h"

namespace tandem {
namespace {

struct Rule {
  const char* hf;    // name after the prefix (and after `layers.N.` for layer rules)
  const char* gguf;  // GGUF name (without `blk.N.` for layer rules)
  HfTensorPart part = HfTensorPart::kWhole;
};

// Model-wide tensors of the text model.
constexpr Rule kGlobalRules[] = {
    {"embed_tokens.weight", "token_embd.weight"},
    {"norm.weight", "output_norm.weight"},
    {"embed_tokens_per_layer.weight", "per_layer_token_embd.weight"},
    {"per_layer_model_projection.weight", "per_layer_model_proj.weight"},
    {"per_layer_projection_norm.weight", "per_layer_proj_norm.weight"},
};

// Assistant tensors outside the text model (no `model.` prefix).
constexpr Rule kAssistantTopRules[] = {
    {"pre_projection.weight", "nextn.pre_projection.weight"},
    {"post_projection.weight", "nextn.post_projection.weight"},
    {"masked_embedding.centroids.weight", "masked_embd_centroids.weight"},
    {"masked_embedding.token_ordering", "masked_embd_ordering"},
};

// Per-layer tensors, after `layers.N.`. Bare parameters (layer_scalar, experts, scales) are
// listed with and without the `.weight` llama.cpp appends.
constexpr Rule kLayerRules[] = {
    {"input_layernorm.weight", "attn_norm.weight"},
    {"self_attn.q_proj.weight", "attn_q.weight"},
    {"self_attn.k_proj.weight", "attn_k.weight"},
    {"self_attn.v_proj.weight", "attn_v.weight"},
    {"self_attn.o_proj.weight", "attn_output.weight"},
    {"self_attn.q_norm.weight", "attn_q_norm.weight"},
    {"self_attn.k_norm.weight", "attn_k_norm.weight"},
    {"post_attention_layernorm.weight", "post_attention_norm.weight"},
    {"pre_feedforward_layernorm.weight", "ffn_norm.weight"},
    {"mlp.gate_proj.weight", "ffn_gate.weight"},
    {"mlp.up_proj.weight", "ffn_up.weight"},
    {"mlp.down_proj.weight", "ffn_down.weight"},
    {"post_feedforward_layernorm.weight", "post_ffw_norm.weight"},
    {"layer_scalar", "layer_output_scale.weight"},
    {"layer_scalar.weight", "layer_output_scale.weight"},
    // Per-layer embeddings (E2B/E4B).
    {"per_layer_input_gate.weight", "inp_gate.weight"},
    {"per_layer_projection.weight", "proj.weight"},
    {"post_per_layer_input_norm.weight", "post_norm.weight"},
    // MoE (26B-A4B).
    {"router.proj.weight", "ffn_gate_inp.weight"},
    {"router.scale", "ffn_gate_inp.scale"},
    {"router.per_expert_scale", "ffn_down_exps.scale"},
    {"pre_feedforward_layernorm_2.weight", "pre_ffw_norm_2.weight"},
    {"post_feedforward_layernorm_1.weight", "post_ffw_norm_1.weight"},
    {"post_feedforward_layernorm_2.weight", "post_ffw_norm_2.weight"},
    {"experts.gate_up_proj", "ffn_gate_up_exps.weight"},
    {"experts.gate_up_proj.weight", "ffn_gate_up_exps.weight"},
    {"experts.down_proj", "ffn_down_exps.weight"},
    {"experts.down_proj.weight", "ffn_down_exps.weight"},
    {"experts.gate_proj", "ffn_gate_up_exps.weight", HfTensorPart::kExpertGate},
    {"experts.gate_proj.weight", "ffn_gate_up_exps.weight", HfTensorPart::kExpertGate},
    {"experts.up_proj", "ffn_gate_up_exps.weight", HfTensorPart::kExpertUp},
    {"experts.up_proj.weight", "ffn_gate_up_exps.weight", HfTensorPart::kExpertUp},
    // Alternative spellings some checkpoints use (docs/gemma4.md § Conversion from Hugging Face).
    {"moe.gate_up_proj", "ffn_gate_up_exps.weight"},
    {"moe.gate_up_proj.weight", "ffn_gate_up_exps.weight"},
    {"moe.down_proj", "ffn_down_exps.weight"},
    {"moe.down_proj.weight", "ffn_down_exps.weight"},
    {"moe.gate_proj", "ffn_gate_up_exps.weight", HfTensorPart::kExpertGate},
    {"moe.gate_proj.weight", "ffn_gate_up_exps.weight", HfTensorPart::kExpertGate},
    {"moe.up_proj", "ffn_gate_up_exps.weight", HfTensorPart::kExpertUp},
    {"moe.up_proj.weight", "ffn_gate_up_exps.weight", HfTensorPart::kExpertUp},
    {"moe.per_expert_scale", "ffn_down_exps.scale"},
};

bool StripPrefix(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// `layers.N.rest` → (N, rest); false if `s` is not a layer name.
bool SplitLayer(std::string_view s, int* layer, std::string_view* rest) {
  if (!StripPrefix(s, "layers.")) return false;
  const size_t dot = s.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 6) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + dot, *layer);
  if (ec != std::errc() || end != s.data() + dot || *layer < 0) return false;
  *rest = s.substr(dot + 1);
  return true;
}

HfTensorName MapTextModel(std::string_view name) {
  HfTensorName out;
  for (const Rule& r : kGlobalRules) {
    if (name == r.hf) {
      out.role = HfTensorRole::kTensor;
      out.gguf_name = r.gguf;
      return out;
    }
  }
  int layer = 0;
  std::string_view rest;
  if (!SplitLayer(name, &layer, &rest)) return out;
  for (const Rule& r : kLayerRules) {
    if (rest == r.hf) {
      out.role = HfTensorRole::kTensor;
      out.gguf_name = "blk." + std::to_string(layer) + "." + r.gguf;
      out.layer = layer;
      out.part = r.part;
      return out;
    }
  }
  return out;
}

}  // namespace

HfTensorName MapHfTensorName(std::string_view hf_name, HfModelKind kind) {
  HfTensorName out;
  std::string_view name = hf_name;
  if (name == "lm_head.weight") {
    out.role = HfTensorRole::kTiedHead;
    return out;
  }
  if (IsMultimodalTensorName(name)) {
    out.role = HfTensorRole::kMultimodal;
    return out;
  }
  if (kind == HfModelKind::kAssistant) {
    for (const Rule& r : kAssistantTopRules) {
      if (name == r.hf) {
        out.role = HfTensorRole::kTensor;
        out.gguf_name = r.gguf;
        return out;
      }
    }
  }
  if (!StripPrefix(name, "model.language_model.") && !StripPrefix(name, "model.")) {
    return out;
  }
  return MapTextModel(name);
}

}  // namespace tandem
