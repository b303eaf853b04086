// Writes random-weight gemma4v mmproj GGUFs in llama.cpp's layout (keys, key types, tensor
// names, shapes and the converter's dtype rules), deterministic from a seed: fixtures for tests,
// benchmarks and the llama.cpp oracle (`tandem mkmodel --mmproj`).
#pragma once

#include <cstdint>
#include <string>

#include "encoders/gemma4v/config.h"
#include "encoders/gemma4v/tensors.h"
#include "tensor/type_traits.h"

namespace tandem {

struct RandomMmprojOptions {
  uint64_t seed = 1234;
  // The linears' weights (and, for F16, the patch embedding): the converter's --outtype. A row
  // that does not fit the type's blocks falls back to F16, as llama.cpp's converter does.
  TensorType weight_type = TensorType::kF32;
  std::string name = "tandem random gemma4v mmproj";
};

// Keys and dtypes as llama.cpp's converter writes them (encoders/gemma4v/mmproj_layout.h).
//
// Values: linears uniform with variance 1/fan_in, the patch embedding likewise (fan-in 3·p·p),
// position tables uniform in [-0.5, 0.5], norm gains in [0.6, 1.4] (q/k norms scaled to RMS
// hd^-1/4 so the scale-1 attention scores have unit variance), clamp bounds of magnitude in
// [1, 3] (so some bite on unit-RMS activations), out_scale in [0.5, 1], std_bias in [-1, 1],
// std_scale in [0.5, 1.5]; activations stay O(1) through the tower. Each tensor's values depend
// only on (seed, tensor name). Throws Error on a type tandem cannot write or on I/O.
void WriteRandomGemma4VisionMmproj(const Gemma4VisionConfig& config,
                                   const RandomMmprojOptions& options, const std::string& path);

}  // namespace tandem
