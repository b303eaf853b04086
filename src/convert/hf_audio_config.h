// The audio tower of a Hugging Face Gemma4ForConditionalGeneration checkpoint (E2B, E4B), read
// from config.json's `audio_config` with transformers' defaults, as the gemma4a mmproj config
// tandem writes (docs/audio.md § Conversion).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "encoders/gemma4a/config.h"

namespace tandem {

// Parses the text of config.json: nullopt when it has no audio_config (26B, 31B, text-only).
// The keys come from hidden_size, num_hidden_layers, num_attention_heads, rms_norm_eps (stored;
// the tower runs 1e-6 whatever it says), input_feat_size (mel bins, default 128) and
// text_config.hidden_size; n_ff is 4·hidden_size (transformers' fixed FFN width); the tensor
// facts from subsampling_conv_channels (two channel counts), output_proj_dims and
// use_clipped_linears. Throws Error(kUnsupported) naming the field for a value the mmproj file
// cannot carry (llama.cpp fixes it): hidden_act other than silu, conv_kernel_size other than 5,
// residual_weight other than 0.5, attention_chunk_size 12, attention_context_left 13,
// attention_context_right 0, attention_logit_cap 50, gradient_clipping 1e10; Error(kCorrupt)
// for malformed JSON, a field of the wrong type or range, or a missing text_config;
// Error(kInvalidArgument) for sizes gemma4a rejects (Gemma4AudioConfig::Validate). Messages
// start with `source` and name the field.
std::optional<Gemma4AudioConfig> ParseHfAudioConfig(std::string_view json_text,
                                                    const std::string& source);

// Reads `dir`/config.json and parses it as above.
std::optional<Gemma4AudioConfig> LoadHfAudioConfig(const std::string& dir);

}  // namespace tandem
