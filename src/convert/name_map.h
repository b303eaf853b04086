// Hugging Face Gemma 4 tensor names → GGUF tensor names, as llama.cpp's converter names them
// (docs/gemma4.md § Tensors, docs/mtp.md § Tensors). The converter checks every
// mapped name and shape against Gemma4TensorList, so this file holds names only, no shapes.
#pragma once

#include <string>
#include <string_view>

#include "convert/hf_config.h"

namespace tandem {

enum class HfTensorRole {
  kTensor,      // becomes the GGUF tensor `gguf_name`
  kMultimodal,  // vision / audio tower or embedder: not part of a text GGUF
  kTiedHead,    // lm_head.weight: the tied output head, a copy of the token embedding
  kUnmapped,    // no rule matches
};

// Separate expert gate / up projections (the `moe.gate_proj` style) are written as the two halves
// of `ffn_gate_up_exps.weight`, gate first, as in the fused HF tensor.
enum class HfTensorPart { kWhole, kExpertGate, kExpertUp };

struct HfTensorName {
  HfTensorRole role = HfTensorRole::kUnmapped;
  std::string gguf_name;  // for kTensor
  int layer = -1;         // block index for `blk.N.*` tensors
  HfTensorPart part = HfTensorPart::kWhole;
};

// Maps one checkpoint name. Prefixes stripped: `model.language_model.` and `model.` (the text
// model of a target), `model.` (an assistant's body; its pre/post projections and masked
// embedding sit at the top level). Handles llama.cpp's fix-ups (`layer_scalar` →
// `layer_output_scale.weight`, `router.scale` → `ffn_gate_inp.scale`, `per_expert_scale` →
// `ffn_down_exps.scale`, bare expert parameters) and the alternative `moe.*` spellings.
HfTensorName MapHfTensorName(std::string_view hf_name, HfModelKind kind);

}  // namespace tandem
