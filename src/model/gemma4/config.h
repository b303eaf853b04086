// Gemma 4 text-model hyperparameters: read from `gemma4.*` GGUF keys, validated, with the
// per-layer values the forward pass needs (docs/gemma4.md § Per-layer values; docs/formats.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

class GgufFile;
class GgufWriter;

struct Gemma4LayerConfig {
  bool sliding = true;  // sliding-window attention (else full/global)
  int head_dim = 0;     // 256 sliding, 512 full in the real sizes
  int n_head_kv = 0;
  int n_ff = 0;         // dense (or shared) GeGLU width; E2B doubles it on KV-shared layers
  bool owns_kv = true;  // computes K/V; false for KV-shared layers (E2B/E4B tail)
  int kv_source = 0;    // layer whose cache this layer reads (itself when it owns KV)
  float rope_base = 0;  // 1e4 sliding, 1e6 full
  int n_rot = 0;        // rotated dims as stored (full layers: 512, partial via rope_freqs)
};

struct Gemma4Config {
  int n_vocab = 0;
  int n_embd = 0;            // D
  int n_layer = 0;           // L
  int n_head = 0;            // H (query heads, every layer)
  int n_embd_per_layer = 0;  // P: per-layer-embedding width; 0 without PLE
  int sliding_window = 0;    // key visible iff query pos - key pos < window
  int n_ctx_train = 0;
  int shared_kv_layers = 0;  // the last this-many layers reuse an earlier layer's cache
  int head_dim_full = 0;
  int head_dim_swa = 0;
  float rope_base_full = 1e6f;
  float rope_base_swa = 1e4f;
  int n_rot_full = 0;
  int n_rot_swa = 0;
  float rms_eps = 1e-6f;
  float final_logit_softcap = 0;  // 0 = none
  int n_expert = 0;               // MoE (26B-A4B); 0 = dense
  int n_expert_used = 0;
  int n_ff_expert = 0;
  // Full-attention layers have no attn_v and use V = K (26B-A4B, 31B). Not a GGUF key: read from
  // tensor presence at load, chosen by the preset when generating.
  bool full_v_equals_k = false;
  // MTP assistant body (arch gemma4-assistant): every layer is Q-only and reads another model's
  // cache, so no layer owns KV (kv_source = -1).
  bool q_only = false;
  std::vector<Gemma4LayerConfig> layers;

  int n_layer_kv() const { return n_layer - shared_kv_layers; }  // layers that own a cache

  // Reads and validates the `gemma4.*` keys of `file`. Throws Error naming the key and what was
  // expected (e.g. "m.gguf: gemma4.attention.head_count_kv has 5 values, expected 6").
  // `arch` is "gemma4" (target) or "gemma4-assistant" (the assistant's body; sets q_only).
  static Gemma4Config FromGguf(const GgufFile& file, std::string_view arch = "gemma4");
  // Writes the keys the way llama.cpp's converter does (types and scalar-or-array choices), under
  // the `arch` prefix.
  void WriteToGguf(GgufWriter& writer, std::string_view arch = "gemma4") const;
  // Recomputes the per-layer derived values (owns_kv, kv_source, head dims, rope) from the
  // model-wide fields and each layer's `sliding`, `n_head_kv`, `n_ff`; validates. Throws
  // Error(kInvalidArgument) with `source` as the culprit on inconsistency.
  void Derive(const std::string& source);
};

}  // namespace tandem
