// Adds a tensor of random values to a GGUF writer, drawn in fixed-size pieces in parallel and
// converted to the tensor's type on the fly: the shared machinery of the random-weight mmproj
// writers (gemma4v/, gemma4a/), whose values depend only on (seed, tensor name, piece index).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/seeded_random.h"
#include "tensor/type_traits.h"

namespace tandem {

class GgufWriter;

// Fills piece `index` (values [index·n, (index + 1)·n) of the tensor in GGUF order) into out[n].
// Called from several threads at once, each piece once.
using RandomPiece = std::function<void(uint64_t index, int64_t n, float* out)>;

// Adds `name` of `type` and shape `ne` to `writer`; its data, produced when the writer writes,
// is `fill` over pieces of `piece` values (which must divide the tensor and, for a block type,
// be a multiple of its block), each converted to `type` (F32 as is).
void AddRandomTensor(GgufWriter& writer, const std::string& name, TensorType type,
                     const std::vector<uint64_t>& ne, int64_t piece, RandomPiece fill);

// A random clamp bound for the tensor `name` (a `..._min` or `..._max` scalar of a clippable
// linear): minimums negative, maximums positive, magnitudes in [1, 3]; one draw of `rng`.
inline float RandomClampBound(const std::string& name, RowRng& rng) {
  const bool is_min = name.find("_min") != std::string::npos;
  const float m = rng.Uniform(1.0f, 3.0f);
  return is_min ? -m : m;
}

}  // namespace tandem
