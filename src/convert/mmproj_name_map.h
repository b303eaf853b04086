// Hugging Face Gemma 4 multimodal tensor names → the GGUF names of llama.cpp's mmproj layout
// (docs/vision.md § Conversion from Hugging Face, docs/audio.md § Conversion). Names only: the
// conversion plan checks every result against Gemma4VisionTensorList / Gemma4AudioTensorList.
// The text converter asks IsMultimodalTensorName which tensors to leave out, so both sides use
// one list of prefixes.
#pragma once

#include <string>
#include <string_view>

namespace tandem {

enum class HfMmprojRole {
  kVision,         // becomes the gemma4v tensor `gguf_name`
  kAudio,          // becomes the gemma4a tensor `gguf_name`
  kDropped,        // a buffer the file leaves out (the vision RoPE's inv_freq, the audio
                   // relative-position timescales and soft-cap constant)
  kUnmapped,       // under a multimodal prefix but no rule matches
  kNotMultimodal,  // a text-model tensor
};

struct HfMmprojName {
  HfMmprojRole role = HfMmprojRole::kNotMultimodal;
  std::string gguf_name;  // for kVision and kAudio
};

// Maps one checkpoint name. `model.` is optional before every prefix (vision_tower.,
// embed_vision., audio_tower., embed_audio.). Clippable linears are spelled `<proj>.linear.weight`
// (the wrapper) or `<proj>.weight`; their bounds `<proj>.input_min` etc. keep the suffix
// (`v.blk.N.attn_q.input_min`, `a.blk.N.conv_pw1.output_max`); the vision tower's bare
// parameters (position_embedding_table, layer_scalar) may carry `.weight`.
HfMmprojName MapHfMmprojName(std::string_view hf_name);

// The checkpoint name a gemma4v or gemma4a GGUF tensor is converted from, in transformers'
// spelling (`model.vision_tower.…`, `model.audio_tower.…`, linears as `<proj>.linear.weight`),
// for messages; empty for a name that is neither.
std::string HfMmprojSourceName(std::string_view gguf_name);

// Whether `hf_name` belongs to the vision or audio side (anything MapHfMmprojName does not call
// kNotMultimodal, plus Gemma 3's `multi_modal_projector.`).
bool IsMultimodalTensorName(std::string_view hf_name);

}  // namespace tandem
