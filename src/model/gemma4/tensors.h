// The one list of Gemma 4 tensors: GGUF names, shapes (ne order) and roles, derived from a config.
// Loading, validation, random-model generation and conversion all iterate this list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/gemma4/config.h"

namespace tandem {

enum class TensorRole {
  kMatrix,     // a weight matrix: quantizable, N(0, 1/fan_in) in random models
  kEmbedding,  // token / per-layer embedding table: quantizable, row lookup
  kNorm,       // RMSNorm gain [n]: F32
  kScale,      // per-layer or per-expert scalars / vectors: F32
  kRopeFreqs,  // generated proportional-RoPE factors: F32
};

struct Gemma4TensorSpec {
  std::string name;          // e.g. "blk.3.attn_q.weight"
  std::vector<uint64_t> ne;  // GGUF order: ne[0] is the row length (input features)
  TensorRole role;
  bool required;  // the loader fails when a required tensor is missing
  int layer;      // -1 for global tensors
};

std::vector<Gemma4TensorSpec> Gemma4TensorList(const Gemma4Config& config);

// Name of layer tensor `suffix` ("attn_q.weight") of layer `layer`.
std::string LayerTensorName(int layer, const char* suffix);

// Values of rope_freqs.weight [head_dim_full / 2]: 1.0 for the rotated pairs of a
// partial_rotary_factor of 0.25 (docs/gemma4.md § RoPE), 1e30 for the rest.
std::vector<float> Gemma4RopeFreqs(const Gemma4Config& config, float partial_rotary_factor = 0.25f);

}  // namespace tandem
