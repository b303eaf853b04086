// Writes random-weight gemma4v mmproj GGUFs in llama.cpp's layout (keys, key types, tensor
// names, shapes and the converter's dtype rules), deterministic from a seed: fixtures for tests,
// benchmarks and the llama.cpp oracle (`tandem mkmodel --mmproj`).
#pragma once

#include <cstdint>
#include <string>

#include "encoders/gemma4v/config.h"
#include "encoders/gemma4v/tensors.h"
#include "encoders/random_mmproj.h"

namespace tandem {

class GgufWriter;

// Keys and dtypes as llama.cpp's converter writes them (encoders/gemma4v/mmproj_layout.h).
//
// Values: linears uniform with variance 1/fan_in, the patch embedding likewise (fan-in 3·p·p),
// position tables uniform in [-0.5, 0.5], norm gains in [0.6, 1.4] (q/k norms scaled to RMS
// hd^-1/4 so the scale-1 attention scores have unit variance), clamp bounds of magnitude in
// [1, 3] (so some bite on unit-RMS activations), out_scale in [0.5, 1], std_bias in [-1, 1],
// std_scale in [0.5, 1.5]; activations stay O(1) through the tower. Each tensor's values depend
// only on (seed, tensor name). Throws Error on a type tandem cannot write or on I/O. A
// vision-only file (encoders/random_mmproj.h writes files with more towers).
void WriteRandomGemma4VisionMmproj(const Gemma4VisionConfig& config,
                                   const RandomMmprojOptions& options, const std::string& path);

// Adds the tower's tensors, drawn as above, to `writer` (the keys are the caller's).
void AddRandomGemma4VisionTensors(const Gemma4VisionConfig& config,
                                  const RandomMmprojOptions& options, GgufWriter& writer);

}  // namespace tandem
