// Random-weight gemma4a towers in llama.cpp's layout (keys, key types, tensor names, shapes and
// the converter's dtype rules), deterministic from a seed: fixtures for tests, benchmarks and the
// llama.cpp oracle. `tandem mkmodel --mmproj` writes them beside the vision tower in one file
// (encoders/random_mmproj.h).
#pragma once

#include <string>

#include "encoders/gemma4a/config.h"
#include "encoders/random_mmproj.h"

namespace tandem {

class GgufWriter;

// Adds the tower's tensors to `writer` (the keys are the caller's), typed by
// AudioMmprojTensorType for options.weight_type.
//
// Values: convolution kernels and linears uniform with variance 1/fan_in (a subsampling kernel
// drawn per output channel, fan-in 9·C_in; a depthwise filter per channel, fan-in K), norm gains
// in [0.6, 1.4], per_dim_scale in [0.5, 0.9] (around softplus(0) = ln 2, the checkpoint's value
// at initialisation), clamp bounds of magnitude in [1, 3], the output bias in [-0.5, 0.5].
// Each tensor's values depend only on (seed, tensor name).
void AddRandomGemma4AudioTensors(const Gemma4AudioConfig& config,
                                 const RandomMmprojOptions& options, GgufWriter& writer);

// An audio-only file: WriteRandomMmproj(nullptr, &config, options, path).
void WriteRandomGemma4AudioMmproj(const Gemma4AudioConfig& config,
                                  const RandomMmprojOptions& options, const std::string& path);

}  // namespace tandem
