// Test helper: small synthetic Hugging Face Gemma 4 checkpoints for every layout (E2B-like,
// 26B-like MoE, 31B-like, MTP assistant with centroids), written from the HF side of the specs
// with the GGUF name each tensor should become (text model or mmproj), plus config.json and the
// tokenizer files.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/gemma4/config.h"
#include "model/synthetic_vocab.h"

namespace tandem::testing {

// The vision tower of a multimodal checkpoint (HF naming, transformers' Gemma4VisionModel), by
// default the smallest one that exercises every gemma4v path: clamp bounds and standardization.
struct HfVisionSpec {
  int hidden = 32, layers = 2, heads = 2, head_dim = 16, ff = 64;
  int patch = 16, pooling = 3, positions = 64;
  bool clipped = true;      // use_clipped_linears: 0-d bounds on every linear (one left at +inf)
  bool standardize = true;  // std_bias / std_scale
};

// The audio tower of a multimodal checkpoint (HF naming, transformers' Gemma4AudioModel and the
// audio Gemma4MultimodalEmbedder), by default the tiny gemma4a shape: width 32, 2 layers of 2
// heads, subsampling channels 128 and 4, output projection 48, clamp bounds. The mel bins are
// transformers' fixed 128 (its input projection takes (channels0 / 4)·channels1 inputs).
struct HfAudioSpec {
  bool present = true;  // audio_config and the tower's tensors (E2B/E4B)
  int hidden = 32, layers = 2, heads = 2, channels0 = 128, channels1 = 4, output = 48;
  bool clipped = true;  // use_clipped_linears: 0-d bounds on every clippable linear
};

struct HfSpec {
  std::string name;          // for directory names
  std::string architecture;  // the config.json `architectures` entry
  std::string prefix;        // text-model tensor prefix: "model.language_model." or "model."
  std::string dtype;         // stored dtype of every float tensor: F32, F16 or BF16
  int vocab = 512, hidden = 128, layers = 6, heads = 4, kv_heads = 1;
  int global_kv_heads = 0;  // 0: null in config.json
  int head_dim = 32, global_head_dim = 64, ff = 256, kv_shared = 0, window = 32;
  int ple = 0;                // hidden_size_per_layer_input
  bool ple_in_config = true;  // write hidden_size_per_layer_input (else the converter infers it)
  std::vector<bool> sliding;  // [layers]
  bool double_wide = false, k_eq_v = false;
  int experts = 0, top_k = 0, moe_ff = 0;
  bool split_experts = false;      // moe.gate_proj / moe.up_proj / moe.down_proj spellings
  bool shared_kv_tensors = false;  // K/V projections on KV-shared layers too (to be dropped)
  bool multimodal = false;         // vision tower (+ audio tensors): skipped by the text GGUF
  HfVisionSpec vision;             // with multimodal
  HfAudioSpec audio;               // with multimodal
  bool lm_head = false;            // a tied lm_head.weight (to be dropped)
  float softcap = 30.0f;
  bool assistant = false;
  int backbone = 0, centroids = 0, centroid_top_k = 0;
  uint64_t seed = 1;
};

struct HfTensor {
  std::string name;  // HF name
  std::string gguf;  // the GGUF tensor it becomes; empty when skipped or dropped
  int half = 0;      // 1 / 2: gate / up half of ffn_gate_up_exps; 0: the whole tensor
  std::string dtype;
  std::vector<uint64_t> shape;  // PyTorch order
  std::vector<float> values;    // float tensors: exactly the stored values
  std::vector<int64_t> ints;    // integer tensors
  std::string mmproj;           // the mmproj tensor it becomes (vision, audio); else empty
  bool multimodal = false;      // a vision or audio tensor
};

struct HfCheckpoint {
  HfSpec spec;
  nlohmann::json config;
  std::vector<HfTensor> tensors;
  SyntheticVocab vocab;
};

HfSpec E2bLikeSpec();       // multimodal wrapper with the default HfVisionSpec, PLE, KV sharing (+
                            // unused K/V), double-wide MLP
HfSpec Moe26bLikeSpec();    // CausalLM at the top level, MoE, V = K, per-layer KV heads, F32
HfSpec Dense31bLikeSpec();  // dense V = K, F16, hidden 256 (K-quant friendly), tied lm_head
HfSpec AssistantSpec();     // MTP assistant for E2bLikeSpec's target, with centroids, BF16

HfCheckpoint MakeHfCheckpoint(const HfSpec& spec);

// Writes `dir`/config.json, model.safetensors (n_shards == 1) or n_shards files plus
// model.safetensors.index.json, tokenizer.json, tokenizer_config.json and chat_template.jinja.
void WriteHfCheckpoint(const HfCheckpoint& ckpt, const std::string& dir, int n_shards);

// tokenizer.json text for `vocab` (BPE, byte fallback, U+2581 space escaping, added tokens).
std::string TokenizerJsonText(const SyntheticVocab& vocab);

inline constexpr const char* kChatTemplate =
    "{{ bos_token }}{% for m in messages %}<|turn>{{ m.role }}\n{{ m.content }}<turn|>\n"
    "{% endfor %}<|turn>model\n";

// The model config the checkpoint describes, built from the spec (independently of hf_config).
Gemma4Config ExpectedConfig(const HfSpec& spec);

}  // namespace tandem::testing
