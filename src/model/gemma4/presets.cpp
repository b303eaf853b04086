#include "model/gemma4/presets.h"

#include "base/error.h"

namespace tandem {
namespace {

struct PresetSpec {
  const char* name;
  int n_vocab, n_embd, n_layer, n_head;
  int period;  // layer pattern: (period - 1) sliding layers then one full layer
  int n_head_kv_swa, n_head_kv_full;
  int head_dim_swa, head_dim_full;
  int n_ff;
  bool double_wide;  // KV-shared layers get 2 * n_ff (E2B)
  int n_embd_per_layer;
  int shared_kv_layers;
  int sliding_window;
  int n_ctx_train;
  int n_expert, n_expert_used, n_ff_expert;
  bool full_v_equals_k;
};

// Real shapes from docs/gemma4.md § Sizes; tiny ones keep each size's features.
constexpr PresetSpec kPresets[] = {
    {"e2b", 262144, 1536, 35, 8,   5,      1, 1, 256, 512,
     6144,  true,   256,  20, 512, 131072, 0, 0, 0,   false},
    {"e4b", 262144, 2560, 42, 8,   6,      2, 2, 256, 512,
     10240, false,  256,  18, 512, 131072, 0, 0, 0,   false},
    {"26b-a4b", 262144, 2816, 30, 16,   6,      8,   2, 256, 512,
     2112,      false,  0,    0,  1024, 262144, 128, 8, 704, true},
    {"31b", 262144, 5376, 60, 32,   6,      16, 4, 256, 512,
     21504, false,  0,    0,  1024, 262144, 0,  0, 0,   true},
    // Same shape as the llama.cpp-written fixture in shared/fixtures/llamacpp-tiny.
    {"tiny-e2b", 512, 128, 6, 4, 3, 1, 1, 32, 64, 256, true, 32, 3, 32, 4096, 0, 0, 0, false},
    {"tiny-e4b", 512, 128, 12, 4, 6, 2, 2, 32, 64, 256, false, 16, 6, 32, 4096, 0, 0, 0, false},
    {"tiny-26b-a4b", 512, 128, 6, 8, 6, 4, 2, 32, 64, 96, false, 0, 0, 32, 4096, 16, 4, 64, true},
    {"tiny-31b", 512, 128, 6, 8, 6, 4, 2, 32, 64, 256, false, 0, 0, 32, 4096, 0, 0, 0, true},
};

Gemma4Config Build(const PresetSpec& p) {
  Gemma4Config c;
  c.n_vocab = p.n_vocab;
  c.n_embd = p.n_embd;
  c.n_layer = p.n_layer;
  c.n_head = p.n_head;
  c.n_embd_per_layer = p.n_embd_per_layer;
  c.sliding_window = p.sliding_window;
  c.n_ctx_train = p.n_ctx_train;
  c.shared_kv_layers = p.shared_kv_layers;
  c.head_dim_full = p.head_dim_full;
  c.head_dim_swa = p.head_dim_swa;
  c.n_rot_full = p.head_dim_full;  // proportional partial rotation comes from rope_freqs
  c.n_rot_swa = p.head_dim_swa;
  c.final_logit_softcap = 30.0f;
  c.n_expert = p.n_expert;
  c.n_expert_used = p.n_expert_used;
  c.n_ff_expert = p.n_ff_expert;
  c.full_v_equals_k = p.full_v_equals_k;
  c.layers.resize(p.n_layer);
  const int first_shared = p.n_layer - p.shared_kv_layers;
  for (int l = 0; l < p.n_layer; ++l) {
    Gemma4LayerConfig& layer = c.layers[l];
    layer.sliding = (l % p.period) != p.period - 1;
    if (l == p.n_layer - 1) layer.sliding = false;  // the last layer is always full
    layer.n_head_kv = layer.sliding ? p.n_head_kv_swa : p.n_head_kv_full;
    layer.n_ff =
        (p.double_wide && p.shared_kv_layers > 0 && l >= first_shared) ? 2 * p.n_ff : p.n_ff;
  }
  c.Derive(std::string("preset ") + p.name);
  return c;
}

}  // namespace

std::vector<std::string> Gemma4PresetNames() {
  std::vector<std::string> names;
  for (const auto& p : kPresets) names.emplace_back(p.name);
  return names;
}

Gemma4Config Gemma4Preset(std::string_view name) {
  for (const auto& p : kPresets) {
    if (name == p.name) return Build(p);
  }
  std::string valid;
  for (const auto& n : Gemma4PresetNames()) valid += (valid.empty() ? "" : ", ") + n;
  Fail(ErrorKind::kInvalidArgument,
       "unknown model config '" + std::string(name) + "' (valid: " + valid + ")");
}

}  // namespace tandem

namespace tandem {

AssistantPreset Gemma4AssistantPreset(std::string_view target_name, bool centroids) {
  const Gemma4Config target = Gemma4Preset(target_name);
  const bool tiny = target_name.rfind("tiny", 0) == 0;
  const bool big = target_name.find("26b") != std::string_view::npos ||
                   target_name.find("31b") != std::string_view::npos;
  AssistantPreset a;
  Gemma4Config& c = a.body;
  c.q_only = true;
  c.n_vocab = target.n_vocab;
  c.n_embd = tiny ? 64 : (big ? 1024 : 256);
  c.n_layer = 4;
  c.n_head = tiny ? (big ? 8 : 2) : (big ? 32 : 4);
  c.sliding_window = target.sliding_window;
  c.n_ctx_train = target.n_ctx_train;
  c.shared_kv_layers = 4;
  c.head_dim_full = target.head_dim_full;
  c.head_dim_swa = target.head_dim_swa;
  c.rope_base_full = target.rope_base_full;
  c.rope_base_swa = target.rope_base_swa;
  c.n_rot_full = target.n_rot_full;
  c.n_rot_swa = target.n_rot_swa;
  c.final_logit_softcap = 0;
  c.layers.resize(4);
  const int L = target.n_layer;
  for (int l = 0; l < 4; ++l) {
    c.layers[l].sliding = l < 3;
    // GQA over the KV heads of the target layer the assistant layer reads.
    c.layers[l].n_head_kv = target.layers[target.layers[l < 3 ? L - 2 : L - 1].kv_source].n_head_kv;
    c.layers[l].n_ff = tiny ? 128 : (big ? 8192 : 2048);
  }
  c.Derive("assistant preset for " + std::string(target_name));
  a.n_embd_out = target.n_embd;
  if (centroids) {
    a.n_centroids = tiny ? 8 : 2048;
    a.centroid_top_k = tiny ? 2 : 32;
  }
  return a;
}

}  // namespace tandem
