#include "convert/hf_config.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "convert/hf_json_fields.h"

namespace tandem {
namespace {

using Json = nlohmann::json;
using Fields = HfJsonFields;

struct ArchEntry {
  const char* name;
  HfModelKind kind;
  bool nested;  // the text model sits under `text_config`
};

constexpr ArchEntry kArchitectures[] = {
    {"Gemma4ForConditionalGeneration", HfModelKind::kTarget, true},
    {"Gemma4ForCausalLM", HfModelKind::kTarget, false},
    {"Gemma4AssistantForCausalLM", HfModelKind::kAssistant, true},
    {"Gemma4UnifiedAssistantForCausalLM", HfModelKind::kAssistant, true},
};

const ArchEntry* ChooseArchitecture(const Json& root, const std::string& source) {
  auto it = root.find("architectures");
  std::vector<std::string> names;
  if (it != root.end() && it->is_array()) {
    for (const Json& n : *it) {
      if (n.is_string()) names.push_back(n.get<std::string>());
    }
  }
  for (const std::string& n : names) {
    for (const ArchEntry& a : kArchitectures) {
      if (n == a.name) return &a;
    }
  }
  std::string listed;
  for (const std::string& n : names) listed += (listed.empty() ? "" : ", ") + n;
  std::string supported;
  for (const std::string& n : SupportedHfArchitectures()) {
    supported += (supported.empty() ? "" : ", ") + n;
  }
  Fail(ErrorKind::kUnsupported,
       source + ": unknown architecture " +
           (listed.empty() ? std::string("(no 'architectures' list)") : "'" + listed + "'") +
           "; tandem converts " + supported);
}

// `eos_token_id` may be an int or a list; the first entry counts.
int FirstTokenId(const Fields& f, const char* key) {
  const Json* v = f.Find(key);
  if (v == nullptr) return -1;
  if (v->is_array()) {
    if (v->empty()) return -1;
    v = &(*v)[0];
  }
  if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > INT32_MAX) {
    f.Bad(key, "must be a token id");
  }
  return static_cast<int>(v->get<int64_t>());
}

struct RopeSettings {
  float theta_swa = 1e4f, theta_full = 1e6f;
  float factor_swa = 1.0f, factor_full = 0.25f;
};

// rope_parameters {sliding_attention: {...}, full_attention: {...}}; HF's defaults when absent.
RopeSettings ReadRope(const Fields& tc, const std::string& source) {
  RopeSettings r;
  auto params = tc.Object("rope_parameters");
  if (!params) return r;
  if (auto swa = params->Object("sliding_attention")) {
    const std::string type = swa->OptString("rope_type").value_or("default");
    if (type != "default") {
      Fail(ErrorKind::kUnsupported, source + ": " + swa->Name("rope_type") + " '" + type +
                                        "' is not supported (expected 'default')");
    }
    r.theta_swa = static_cast<float>(swa->Number("rope_theta", 1e4));
    r.factor_swa = static_cast<float>(swa->Number("partial_rotary_factor", 1.0));
  }
  if (auto full = params->Object("full_attention")) {
    const std::string type = full->OptString("rope_type").value_or("proportional");
    if (type != "proportional" && type != "default") {
      Fail(ErrorKind::kUnsupported, source + ": " + full->Name("rope_type") + " '" + type +
                                        "' is not supported (expected 'proportional')");
    }
    r.theta_full = static_cast<float>(full->Number("rope_theta", 1e6));
    r.factor_full = static_cast<float>(full->Number("partial_rotary_factor", 1.0));
    if (type == "default" && r.factor_full != 1.0f) {
      Fail(ErrorKind::kUnsupported, source + ": " + full->Name("partial_rotary_factor") +
                                        " with rope_type 'default' is not supported");
    }
  }
  for (float f : {r.factor_swa, r.factor_full}) {
    if (!(f > 0.0f && f <= 1.0f)) {
      Fail(ErrorKind::kCorrupt,
           source + ": rope_parameters partial_rotary_factor must be in (0, 1]");
    }
  }
  return r;
}

// The per-layer attention types: `layer_types`, or HF's default 5:1 pattern; the last layer is
// always full attention (HF forces it).
std::vector<bool> ReadSlidingPattern(const Fields& tc, int n_layer, const std::string& source) {
  std::vector<bool> sliding(n_layer);
  if (const Json* types = tc.Find("layer_types")) {
    if (!types->is_array() || static_cast<int>(types->size()) != n_layer) {
      tc.Bad("layer_types",
             "must be a list of num_hidden_layers = " + std::to_string(n_layer) + " entries");
    }
    for (int l = 0; l < n_layer; ++l) {
      const Json& t = (*types)[l];
      if (t == "sliding_attention") {
        sliding[l] = true;
      } else if (t == "full_attention") {
        sliding[l] = false;
      } else {
        Fail(ErrorKind::kCorrupt, source + ": " + tc.Name("layer_types") + "[" + std::to_string(l) +
                                      "] = " + t.dump() +
                                      " is not 'sliding_attention' or 'full_attention'");
      }
    }
  } else {
    for (int l = 0; l < n_layer; ++l) sliding[l] = (l + 1) % 6 != 0;
  }
  if (n_layer > 0) sliding[n_layer - 1] = false;
  return sliding;
}

}  // namespace

std::vector<std::string> SupportedHfArchitectures() {
  std::vector<std::string> names;
  for (const ArchEntry& a : kArchitectures) names.emplace_back(a.name);
  return names;
}

HfModelConfig ParseHfConfig(std::string_view json_text, const std::string& source) {
  Json root;
  try {
    root = Json::parse(json_text);
  } catch (const Json::exception& e) {
    Fail(ErrorKind::kCorrupt, source + ": bad JSON: " + e.what());
  }
  if (!root.is_object()) Fail(ErrorKind::kCorrupt, source + ": not a JSON object");
  const ArchEntry* arch = ChooseArchitecture(root, source);
  const Fields top(root, "", source);
  std::optional<Fields> nested = top.Object("text_config");
  if (arch->nested && !nested) {
    Fail(ErrorKind::kCorrupt, source + ": " + arch->name + " needs a 'text_config' object");
  }
  const Fields tc = nested ? *nested : top;

  HfModelConfig hf;
  hf.kind = arch->kind;
  hf.hf_architecture = arch->name;
  const bool assistant = arch->kind == HfModelKind::kAssistant;
  hf.gguf_arch = assistant ? "gemma4-assistant" : "gemma4";

  const std::string activation =
      tc.OptString("hidden_activation")
          .value_or(tc.OptString("hidden_act").value_or("gelu_pytorch_tanh"));
  if (activation != "gelu_pytorch_tanh") {
    Fail(ErrorKind::kUnsupported, source + ": " + tc.Name("hidden_activation") + " '" + activation +
                                      "' is not supported (gelu_pytorch_tanh only)");
  }
  if (tc.Find("attn_logit_softcapping") != nullptr) {
    Fail(ErrorKind::kUnsupported,
         source + ": " + tc.Name("attn_logit_softcapping") + " is not supported by Gemma 4");
  }
  if (tc.OptString("use_bidirectional_attention").value_or("") == "all") {
    Fail(ErrorKind::kUnsupported,
         source + ": " + tc.Name("use_bidirectional_attention") + " 'all' is not supported");
  }

  Gemma4Config& c = hf.config;
  c.n_vocab = tc.Int("vocab_size", 262144);
  c.n_embd = tc.RequiredInt("hidden_size");
  c.n_layer = tc.RequiredInt("num_hidden_layers");
  c.n_head = tc.RequiredInt("num_attention_heads");
  c.head_dim_swa = tc.Int("head_dim", 256);
  c.head_dim_full = tc.Int("global_head_dim", 512);
  c.sliding_window = tc.Int("sliding_window", 512);
  c.n_ctx_train = tc.Int("max_position_embeddings", 131072);
  c.rms_eps = static_cast<float>(tc.Number("rms_norm_eps", 1e-6));
  c.final_logit_softcap = static_cast<float>(tc.Number("final_logit_softcapping", 0.0));
  if (c.n_layer <= 0 || c.n_layer > 4096) {
    tc.Bad("num_hidden_layers", "must be in [1, 4096]");
  }
  hf.ple_width_given = tc.Has("hidden_size_per_layer_input");  // null counts: it means 0
  c.n_embd_per_layer = tc.Int("hidden_size_per_layer_input", 0);
  hf.vocab_size_per_layer_input = tc.Int("vocab_size_per_layer_input", c.n_vocab);
  hf.tie_word_embeddings = tc.Bool("tie_word_embeddings", top.Bool("tie_word_embeddings", true));

  const RopeSettings rope = ReadRope(tc, source);
  c.rope_base_swa = rope.theta_swa;
  c.rope_base_full = rope.theta_full;
  c.n_rot_swa = static_cast<int>(c.head_dim_swa * rope.factor_swa);
  c.n_rot_full = c.head_dim_full;  // partial rotation comes from rope_freqs
  hf.rope_partial_factor_full = rope.factor_full;

  const bool k_eq_v = tc.Bool("attention_k_eq_v", false);
  c.full_v_equals_k = k_eq_v;
  const int n_kv_swa = tc.Int("num_key_value_heads", 4);
  const std::optional<int> n_kv_global = tc.OptInt("num_global_key_value_heads");
  hf.head_count_kv_as_array = n_kv_global.has_value();
  // HF uses the global KV-head count on full layers only together with attention_k_eq_v.
  const int n_kv_full = (n_kv_global && k_eq_v) ? *n_kv_global : n_kv_swa;

  const int n_ff = tc.RequiredInt("intermediate_size");
  const bool double_wide = tc.Bool("use_double_wide_mlp", false);
  hf.feed_forward_length_as_array = double_wide;
  c.shared_kv_layers = tc.Int("num_kv_shared_layers", 0);
  if (tc.Bool("enable_moe_block", false)) {
    c.n_expert = tc.RequiredInt("num_experts");
    c.n_expert_used = tc.RequiredInt("top_k_experts");
    c.n_ff_expert = tc.OptInt("moe_intermediate_size")
                        .value_or(tc.OptInt("expert_intermediate_size").value_or(0));
    if (c.n_ff_expert <= 0) tc.Bad("moe_intermediate_size", "must be set for an MoE model");
  }

  const std::vector<bool> sliding = ReadSlidingPattern(tc, c.n_layer, source);
  if (assistant) {
    // Every assistant layer reads the target's cache (HF forces num_kv_shared_layers = L).
    if (c.n_embd_per_layer != 0 || c.n_expert != 0 || double_wide) {
      Fail(ErrorKind::kUnsupported, source +
                                        ": an assistant must have no per-layer embeddings, "
                                        "no MoE block and no double-wide MLP");
    }
    c.q_only = true;
    c.shared_kv_layers = c.n_layer;
  }
  const int first_shared = c.n_layer - c.shared_kv_layers;
  c.layers.resize(c.n_layer);
  for (int l = 0; l < c.n_layer; ++l) {
    Gemma4LayerConfig& layer = c.layers[l];
    layer.sliding = sliding[l];
    layer.n_head_kv = layer.sliding ? n_kv_swa : n_kv_full;
    layer.n_ff =
        (double_wide && !assistant && first_shared > 0 && l >= first_shared) ? 2 * n_ff : n_ff;
  }
  c.Derive(source);

  hf.bos_token_id = FirstTokenId(tc.Find("bos_token_id") ? tc : top, "bos_token_id");
  hf.eos_token_id = FirstTokenId(tc.Find("eos_token_id") ? tc : top, "eos_token_id");
  hf.pad_token_id = FirstTokenId(tc.Find("pad_token_id") ? tc : top, "pad_token_id");

  if (assistant) {
    hf.backbone_hidden_size = top.Int("backbone_hidden_size", 1536);
    if (hf.backbone_hidden_size <= 0) top.Bad("backbone_hidden_size", "must be > 0");
    hf.use_ordered_embeddings = top.Bool("use_ordered_embeddings", false);
    if (hf.use_ordered_embeddings) {
      hf.num_centroids = top.Int("num_centroids", 2048);
      hf.centroid_top_k = top.Int("centroid_intermediate_top_k", 32);
      if (hf.num_centroids <= 0 || c.n_vocab % hf.num_centroids != 0) {
        top.Bad("num_centroids", "must divide vocab_size " + std::to_string(c.n_vocab));
      }
      if (hf.centroid_top_k <= 0 || hf.centroid_top_k > hf.num_centroids) {
        top.Bad("centroid_intermediate_top_k", "must be in [1, num_centroids]");
      }
    }
  }
  return hf;
}

HfModelConfig LoadHfConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, path + ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) Fail(ErrorKind::kIo, path + ": read failed");
  return ParseHfConfig(text.str(), path);
}

}  // namespace tandem
