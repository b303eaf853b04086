// llama-quantize's presets that need no importance matrix and its per-tensor type mix
// (docs/formats.md § File types and § Quantization presets; llama.cpp src/llama-quant.cpp): which
// tensors are quantized, and to what, for Q4_K_M, Q3_K_M, IQ4_XS and friends.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/type_traits.h"

namespace tandem {

enum class QuantPreset {
  kQ4_0,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kQ8_0,
  kQ2_K,
  kQ3_K_S,
  kQ3_K_M,
  kQ3_K_L,
  kQ4_K_S,
  kQ4_K_M,
  kQ5_K_S,
  kQ5_K_M,
  kQ6_K,
  kIQ4_NL,
  kIQ4_XS,
  kF16,
  kBF16
};

struct QuantPresetInfo {
  QuantPreset preset;
  std::string_view name;    // "Q4_K_M"
  TensorType default_type;  // the type most tensors get, e.g. Q4_K
  uint32_t file_type;       // llama.cpp's `general.file_type` (llama_ftype), e.g. 15
};

// Every preset, in the order above.
const std::vector<QuantPresetInfo>& QuantPresets();
// Case-insensitive lookup ("q4_k_m", "Q8_0", "bf16"); nullopt for anything else.
std::optional<QuantPreset> ParseQuantPreset(std::string_view name);
const QuantPresetInfo& GetQuantPresetInfo(QuantPreset preset);

// One tensor of the input file, as the rules see it.
struct QuantTensorDesc {
  std::string name;
  TensorType type;           // its current type
  std::vector<uint64_t> ne;  // as stored; the dimension count is ne.size()
};

struct QuantModelDesc {
  int n_layer = 0;   // `{arch}.block_count`
  int n_expert = 0;  // `{arch}.expert_count`, 0 when absent
  int n_gqa = 0;     // layer 0's query heads per KV head (llama.cpp's n_gqa()), 0 when unknown
};

// llama.cpp's `tensor_allows_quantization`: tensors of 2+ dims whose name ends in "weight", except
// norms, the MoE router (`ffn_gate_inp`), `per_layer_model_proj`, position / token-type
// embeddings and a few tiny architecture-specific tensors.
bool TensorAllowsQuantization(const QuantTensorDesc& tensor);

struct QuantChoice {
  TensorType type;        // the output type
  bool fallback = false;  // the row length forced another type than the mix chose
};

// The output type of each tensor of `tensors` (same order) under `preset`, by llama-quantize's
// rules (docs/formats.md § Quantization presets): the tied (or output) head gets Q6_K;
// attn_v, attn_output and ffn_down get more bits per preset (use_more_bits layers for Q4_K_M /
// Q5_K_M, the first layers for Q4_K_S, Q3_K_M and IQ4_*, all of them for Q3_K_L, a step up for
// Q2_K, by grouped-query ratio for Q2_K and IQ4_*); 8-expert models get their attention bumped;
// a row length that does not fit the chosen blocks falls back (Q4_K → Q5_0, Q5_K → Q5_1,
// Q6_K → Q8_0, Q2_K / Q3_K → Q4_0, IQ4_XS → IQ4_NL, then F16). Tensors that are not quantized, and
// those named in `keep`, keep their type. Counters run over the tensors in llama.cpp's order
// (layer, then name), so the choice does not depend on the file's tensor order. Throws
// Error(kInvalidArgument) for an expert model tensor whose layer cannot be read from its name,
// Error(kUnsupported) when a legacy type does not fit a row length (llama.cpp has no fallback for
// it; --keep-type skips the tensor).
std::vector<QuantChoice> ChooseQuantTypes(const std::vector<QuantTensorDesc>& tensors,
                                          QuantPreset preset, const QuantModelDesc& model,
                                          const std::set<std::string, std::less<>>& keep);

}  // namespace tandem
