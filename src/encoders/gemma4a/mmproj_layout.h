// How llama.cpp's converter types the gemma4a tensors of an mmproj file for a given --outtype
// (docs/audio.md § Tensors). The random-weight writer (`tandem mkmodel --mmproj`) follows this
// function, and so must the converter and `tandem quantize` when they learn the audio tower.
#pragma once

#include <cstdint>

#include "encoders/gemma4a/tensors.h"
#include "tensor/type_traits.h"

namespace tandem {

// The dtype of a tensor of `role` with rows of `row_length` values under --outtype
// `weight_type`: the layers' linears, attn_k_rel, a.pre_encode.out and mm.a.input_projection in
// weight_type, F16 when a row does not fit its blocks; everything else F32 (the converter forces
// the subsampling convs, their norms, a.input_projection and the depthwise conv to F32, and 1-D
// tensors, norms, bounds and biases are F32 anyway).
TensorType AudioMmprojTensorType(AudioTensorRole role, uint64_t row_length, TensorType weight_type);

}  // namespace tandem
