// Reading NumPy .npy float arrays (<f4 or <f8, C order) for the developer tools that take
// reference inputs: tandem-encode-image's pictures and tandem-encode-audio's mel features.
#pragma once

#include <string>
#include <vector>

namespace tandem {

struct NpyArray {
  std::vector<int> shape;
  std::vector<float> values;  // C order; <f8 values rounded to f32
};

// Throws Error(kInvalidArgument) naming the file and what is wrong (no magic, another dtype,
// Fortran order, a data size that does not match the shape), Error(kIo) when it cannot be read.
NpyArray ReadNpy(const std::string& path);

}  // namespace tandem
