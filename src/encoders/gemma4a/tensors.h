// The one list of gemma4a tensors in an mmproj file: llama.cpp's names, shapes (GGUF ne order)
// and roles, derived from a config. Loading, the random-weight writer and the dtype rules all
// iterate it (docs/audio.md § Tensors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "encoders/gemma4a/config.h"

namespace tandem {

enum class AudioTensorRole {
  kSubsampleConv,    // a.conv1d.{0,1}.weight {3, 3, C_in, C_out}: a 3x3 conv kernel
  kSubsampleNorm,    // a.conv1d.{0,1}.norm.weight {C_out}: LayerNorm gain over channels
  kInputProjection,  // a.input_projection.weight {C1·Fq, Da}: forced F32 by the converter
  kMatrix,           // a linear's weight {in, out}
  kNorm,             // an RMSNorm gain {Da}
  kPerDimScale,      // a.blk.N.per_dim_scale.weight {hd}: per-dimension query scale (softplus'd)
  kDepthwiseConv,    // a.blk.N.conv_dw.weight {K, Da}: one K-tap causal filter per channel
  kClampBound,       // one bound of a clipped linear {1}, F32
  kOutputBias,       // a.pre_encode.out.bias {O}
};

struct AudioTensorSpec {
  std::string name;
  std::vector<uint64_t> ne;
  AudioTensorRole role;
  bool required;  // the loader fails when it is missing
  int layer;      // -1 for tower-wide tensors
};

// The clippable linears of a conformer layer, in GGUF name order.
inline constexpr const char* kAudioClippedLinears[10] = {
    "ffn_up",   "ffn_down", "attn_q",   "attn_k",   "attn_v",
    "attn_out", "conv_pw1", "conv_pw2", "ffn_up_1", "ffn_down_1"};

// "a.blk.<layer>.<suffix>".
std::string AudioLayerTensorName(int layer, const std::string& suffix);

// Every tensor a file of `config` holds: the clamp bounds when config.clipped_linears, the
// output projection (a.pre_encode.out) when config.n_out > 0.
std::vector<AudioTensorSpec> Gemma4AudioTensorList(const Gemma4AudioConfig& config);

}  // namespace tandem
