// llama.cpp's `general.file_type` value (its llama_ftype enum) for a file whose matrices are all
// of one tensor type, as its converter and quantizer write it.
#pragma once

#include <cstdint>

#include "tensor/type_traits.h"

namespace tandem {

// 0 f32, 1 f16, 2 q4_0, 7 q8_0, 32 bf16, ...; 1024 ("guessed") for a type with no llama_ftype.
uint32_t LlamaFileType(TensorType type);

}  // namespace tandem
