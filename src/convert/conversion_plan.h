// What a Hugging Face checkpoint becomes: every GGUF tensor with its shape, type and source
// tensors. Every checkpoint name goes through the name map and every result is checked against
// Gemma4TensorList (plus the assistant's extra tensors), so the two cannot drift apart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "convert/hf_config.h"
#include "convert/safetensors_reader.h"
#include "model/gemma4/tensors.h"
#include "tensor/type_traits.h"

namespace tandem {

struct PlannedTensor {
  enum class Source {
    kRows,           // inputs[0], converted row by row (embeddings may drop trailing rows)
    kExpertHalves,   // inputs = {gate [E, F, D], up [E, F, D]} fused as ffn_gate_up_exps
    kTokenOrdering,  // inputs[0], an integer buffer written as I32
    kRopeFreqs,      // generated (docs/gemma4.md § RoPE)
    kPatchKernel,    // inputs[0], a patch linear [D, p·p·3] over (row, col, channel) written as
                   // the conv kernel {p, p, 3, D} (docs/vision.md § Conversion from Hugging Face)
    kSoftplus,  // inputs[0] with softplus ln(1 + e^x) applied to every value (the audio tower's
                // per_dim_scale, docs/audio.md § Conversion)
  };
  std::string name;          // GGUF name
  std::vector<uint64_t> ne;  // GGUF order, ne[0] innermost
  TensorType type;           // output type
  Source source = Source::kRows;
  std::vector<const SafetensorsTensor*> inputs;
  bool allow_infinity = false;  // ±inf values are data (clamp bounds); NaN is still refused
};

struct ConversionPlan {
  HfModelConfig hf;  // resolved: n_vocab = tokenizer size, PLE width known, Derive() done
  std::vector<PlannedTensor> tensors;
  size_t n_multimodal = 0;           // vision/audio tensors skipped
  std::vector<std::string> dropped;  // HF names not written: the tied lm_head, K/V of KV-shared
                                     // layers (never read)
};

// Plans the conversion of `checkpoint` (config `hf`, tokenizer of `n_vocab` tokens) to weights of
// `out_type` (F32, F16, BF16 or Q8_0). Throws Error naming the tensors at fault:
// kUnsupported for names with no GGUF mapping (all listed), kNotFound for required tensors the
// checkpoint lacks, kCorrupt for a wrong shape or dtype, a tensor the config does not use, or a
// vocabulary larger than the embedding; kInvalidArgument for another `out_type`. `source` names
// the checkpoint in messages.
ConversionPlan PlanConversion(const HfModelConfig& hf, int n_vocab,
                              const SafetensorsCheckpoint& checkpoint, TensorType out_type,
                              const std::string& source);

// The type llama.cpp's converter writes a tensor in: F32 for 1-D tensors, norms, scales and the
// MoE router; `out_type` for other matrices, F16 when their rows do not fit its blocks.
TensorType ConvertedTensorType(const std::string& name, const std::vector<uint64_t>& ne,
                               TensorRole role, TensorType out_type);

}  // namespace tandem
