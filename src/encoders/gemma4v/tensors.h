// The one list of gemma4v tensors in an mmproj file: llama.cpp's names, shapes (GGUF ne order)
// and roles, derived from a config. Loading, the random-weight writer and the checks all
// iterate it (docs/vision.md § Tensors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "encoders/gemma4v/config.h"

namespace tandem {

enum class VisionTensorRole {
  kPatchEmbedding,  // v.patch_embd.weight: the conv kernel {p, p, 3, Dv}
  kPositionTable,   // v.position_embd.weight {Dv, S, 2}: slab 0 by column, slab 1 by row
  kMatrix,          // a linear's weight {in, out}
  kNorm,            // an RMSNorm gain {Dv}
  kHeadNorm,        // the per-head q/k RMSNorm gain {hd}
  kClampBound,      // one bound of a clipped linear {1}, F32
  kLayerScale,      // v.blk.N.out_scale.weight {1}, F32
  kStdBias,         // v.std_bias {Dv}
  kStdScale,        // v.std_scale {Dv}
};

struct VisionTensorSpec {
  std::string name;
  std::vector<uint64_t> ne;
  VisionTensorRole role;
  bool required;  // the loader fails when it is missing
  int layer;      // -1 for tower-wide tensors
};

// The linears of a layer, in GGUF name order; all clippable.
inline constexpr const char* kVisionLinears[7] = {"attn_q",   "attn_k", "attn_v",  "attn_out",
                                                  "ffn_gate", "ffn_up", "ffn_down"};

// "v.blk.<layer>.<suffix>".
std::string VisionLayerTensorName(int layer, const std::string& suffix);

// Every tensor a file of `config` holds: the clamp bounds when config.clipped_linears, the
// std tensors when config.standardize, out_scale when config.layer_scale.
std::vector<VisionTensorSpec> Gemma4VisionTensorList(const Gemma4VisionConfig& config);

}  // namespace tandem
