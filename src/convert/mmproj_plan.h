// What the multimodal side of a Hugging Face Gemma 4 checkpoint becomes in one mmproj file, as
// llama.cpp's converter writes one file per checkpoint: every gemma4v tensor and, when the
// checkpoint has an audio tower (E2B, E4B), every gemma4a tensor, each with its shape, dtype
// (llama.cpp's converter rules) and source. Every name goes through the mmproj name map and
// every result is checked against Gemma4VisionTensorList / Gemma4AudioTensorList, the lists the
// loaders and the random-weight writer use.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "convert/conversion_plan.h"
#include "convert/hf_vision_config.h"
#include "convert/safetensors_reader.h"
#include "encoders/gemma4a/config.h"
#include "encoders/gemma4v/config.h"
#include "tensor/type_traits.h"

namespace tandem {

struct MmprojPlan {
  Gemma4VisionConfig vision;               // layer_scale resolved against the checkpoint
  std::optional<Gemma4AudioConfig> audio;  // the audio tower, when the checkpoint has one
  // Gemma4VisionTensorList order, then Gemma4AudioTensorList order (the last n_audio_tensors).
  std::vector<PlannedTensor> tensors;
  size_t n_audio_tensors = 0;
  std::vector<std::string> dropped;  // HF names not written (non-persistent buffers)
};

// Plans the mmproj of `checkpoint` (vision config `vision`, audio config `audio` or none) with
// matrices of `out_type` (F32, F16, BF16 or Q8_0). Text-model tensors are ignored. Throws Error
// naming `source` and the tensors at fault: kUnsupported for multimodal names with no GGUF
// mapping (all listed); kNotFound for tensors the configs need that the checkpoint lacks (GGUF
// and HF names; every audio tensor but the clamp bounds is needed, as transformers has them
// all); kCorrupt for a wrong shape or dtype, a layer past num_hidden_layers, clamp bounds without
// use_clipped_linears, std_bias / std_scale without standardize, audio tensors without an
// audio config, or a name given twice; kInvalidArgument for another `out_type`.
MmprojPlan PlanMmprojConversion(const HfVisionConfig& vision,
                                const std::optional<Gemma4AudioConfig>& audio,
                                const SafetensorsCheckpoint& checkpoint, TensorType out_type,
                                const std::string& source);

}  // namespace tandem
