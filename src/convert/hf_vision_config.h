// The vision tower of a Hugging Face Gemma4ForConditionalGeneration checkpoint, read from
// config.json (`vision_config`, with transformers' defaults) and the image processor's config,
// as the gemma4v mmproj config tandem writes (docs/vision.md § Conversion from Hugging Face).
#pragma once

#include <string>
#include <string_view>

#include "encoders/gemma4v/config.h"

namespace tandem {

struct HfVisionConfig {
  // Keys of the mmproj file. n_pos, clipped_linears and standardize come from
  // position_embedding_size, use_clipped_linears and standardize; layer_scale is false (the
  // conversion plan turns it on if the checkpoint has layer scalars); n_embd_text is
  // text_config.hidden_size.
  Gemma4VisionConfig config;
};

// Parses the text of config.json. Throws Error(kUnsupported) for an architecture without a
// gemma4v tower (only Gemma4ForConditionalGeneration has one) or a vision feature the mmproj file
// cannot carry (an activation other than gelu_pytorch_tanh, attention biases, RoPE other than
// the default type with theta 100); Error(kNotFound) when there is no vision_config;
// Error(kCorrupt) for malformed JSON, a field of the wrong type, or sizes gemma4v rejects
// (Gemma4VisionConfig::Validate). Messages start with `source` and name the field.
HfVisionConfig ParseHfVisionConfig(std::string_view json_text, const std::string& source);

// Reads `dir`/config.json, then the image mean and std from `dir`/preprocessor_config.json
// (top-level image_mean / image_std) or processor_config.json (under image_processor) when
// present; transformers' defaults [0, 0, 0] / [1, 1, 1] otherwise.
HfVisionConfig LoadHfVisionConfig(const std::string& dir);

}  // namespace tandem
