// How llama.cpp's converter writes a gemma4v mmproj file: the file-level keys and each tensor's
// dtype for a given --outtype (docs/vision.md § Tensors). The converter (`tandem convert
// --mmproj`), the random-weight writer (`tandem mkmodel --mmproj`) and `tandem quantize` all
// follow these two functions, so the three cannot write different layouts.
#pragma once

#include <cstdint>
#include <string>

#include "encoders/gemma4v/config.h"
#include "encoders/gemma4v/tensors.h"
#include "tensor/type_traits.h"

namespace tandem {

class GgufWriter;

// The dtype of a tensor of `role` with rows of `row_length` values under --outtype
// `weight_type`: the linears (q, k, v, out, gate, up, down and mm.input_projection) in
// weight_type, F16 when a row does not fit its blocks; v.patch_embd.weight F16 when weight_type
// is F16, else F32; the position table, norms, clamp bounds, out_scale and v.std_* F32.
TensorType MmprojTensorType(VisionTensorRole role, uint64_t row_length, TensorType weight_type);

// WriteMmprojGeneralKeys (encoders/mmproj_layout.h), then config.WriteToGguf.
void WriteGemma4VisionMmprojKeys(const Gemma4VisionConfig& config, TensorType weight_type,
                                 const std::string& name, GgufWriter& writer);

}  // namespace tandem
