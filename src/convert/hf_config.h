// A Hugging Face Gemma 4 `config.json` read into the GGUF model config tandem writes: the target
// (Gemma4ForConditionalGeneration with `text_config`, Gemma4ForCausalLM) or the MTP assistant
// (Gemma4AssistantForCausalLM, alias Gemma4UnifiedAssistantForCausalLM), with HF's defaults
// (docs/gemma4.md § Config fields; docs/mtp.md § Shapes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/gemma4/config.h"

namespace tandem {

enum class HfModelKind { kTarget, kAssistant };

struct HfModelConfig {
  HfModelKind kind = HfModelKind::kTarget;
  std::string hf_architecture;  // the `architectures` entry used, e.g. "Gemma4ForCausalLM"
  std::string gguf_arch;        // "gemma4" or "gemma4-assistant"
  // The text model. Derive() has run; n_vocab is config.json's vocab_size and n_embd_per_layer
  // is hidden_size_per_layer_input (0 when null; see ple_width_given).
  Gemma4Config config;
  bool ple_width_given = false;  // hidden_size_per_layer_input present in config.json
  int vocab_size_per_layer_input = 0;
  bool tie_word_embeddings = true;
  float rope_partial_factor_full = 0.25f;  // of the full layers' proportional RoPE
  // llama.cpp writes these keys as per-layer arrays when the config has the field, even if every
  // value is equal: head_count_kv when num_global_key_value_heads is set, feed_forward_length
  // when use_double_wide_mlp is on.
  bool head_count_kv_as_array = false;
  bool feed_forward_length_as_array = false;
  // Special ids from config.json (the fallback when the tokenizer files do not name them).
  int bos_token_id = -1;
  int eos_token_id = -1;
  int pad_token_id = -1;
  // Assistant only.
  int backbone_hidden_size = 0;  // the target's hidden size B
  bool use_ordered_embeddings = false;
  int num_centroids = 0;
  int centroid_top_k = 0;
};

// The `architectures` names tandem converts.
std::vector<std::string> SupportedHfArchitectures();

// Parses the text of a config.json. Throws Error(kUnsupported) for an unknown architecture
// (listing the supported ones) or a feature tandem does not implement (e.g. an activation other
// than gelu_pytorch_tanh, attention logit soft-capping, non-proportional full-layer RoPE), and
// Error(kCorrupt) for malformed JSON or a field of the wrong type or value; messages start with
// `source` and name the field.
HfModelConfig ParseHfConfig(std::string_view json_text, const std::string& source);

// Reads `path` (Error(kIo) if it cannot) and parses it.
HfModelConfig LoadHfConfig(const std::string& path);

}  // namespace tandem
