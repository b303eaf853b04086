// Writes random-weight mmproj GGUFs in llama.cpp's layout holding any of Gemma 4's towers, as
// llama.cpp's converter writes one file per checkpoint with all its encoders (E2B/E4B: vision
// and audio; 26B/31B: vision only). Deterministic from a seed: fixtures for tests, benchmarks
// and the llama.cpp oracle (`tandem mkmodel --mmproj`).
#pragma once

#include <cstdint>
#include <string>

#include "tensor/type_traits.h"

namespace tandem {

struct Gemma4VisionConfig;
struct Gemma4AudioConfig;

struct RandomMmprojOptions {
  uint64_t seed = 1234;
  // The linears' weights (and, for F16, the vision patch embedding): the converter's --outtype.
  // A row that does not fit the type's blocks falls back to F16, as llama.cpp's converter does.
  TensorType weight_type = TensorType::kF32;
  std::string name = "tandem random gemma4v mmproj";
};

// The general keys, then the vision keys and tensors (when `vision`), then the audio keys and
// tensors (when `audio`), each tower as its random_mmproj.h describes. At least one tower.
// Throws Error on a type tandem cannot write, an invalid config, no tower, or on I/O.
void WriteRandomMmproj(const Gemma4VisionConfig* vision, const Gemma4AudioConfig* audio,
                       const RandomMmprojOptions& options, const std::string& path);

}  // namespace tandem
