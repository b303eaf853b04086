// What the vision side of a Hugging Face Gemma 4 checkpoint becomes in an mmproj file: every
// gemma4v tensor with its shape, dtype (llama.cpp's converter rules) and source. Every vision
// name goes through the mmproj name map and every result is checked against
// Gemma4VisionTensorList, the list the loader and the random-weight writer use.
#pragma once

#include <string>
#include <vector>

#include "convert/conversion_plan.h"
#include "convert/hf_vision_config.h"
#include "convert/safetensors_reader.h"
#include "encoders/gemma4v/config.h"
#include "tensor/type_traits.h"

namespace tandem {

struct MmprojPlan {
  Gemma4VisionConfig config;           // layer_scale resolved against the checkpoint
  std::vector<PlannedTensor> tensors;  // in Gemma4VisionTensorList order
  size_t n_audio = 0;                  // audio tower / embedder tensors, not converted yet
  std::vector<std::string> dropped;    // HF names not written (the RoPE inv_freq buffer)
};

// Plans the mmproj of `checkpoint` (vision config `hf`) with matrices of `out_type` (F32, F16,
// BF16 or Q8_0). Text-model tensors are ignored. Throws Error naming `source` and the tensors at
// fault: kUnsupported for vision names with no GGUF mapping (all listed), kNotFound for tensors
// the config needs that the checkpoint lacks (GGUF and HF names), kCorrupt for a wrong shape or
// dtype, a layer past num_hidden_layers, clamp bounds without use_clipped_linears, std_bias /
// std_scale without standardize, or a name given twice; kInvalidArgument for another `out_type`.
MmprojPlan PlanMmprojConversion(const HfVisionConfig& hf, const SafetensorsCheckpoint& checkpoint,
                                TensorType out_type, const std::string& source);

}  // namespace tandem
