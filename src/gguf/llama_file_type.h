// llama.cpp's `general.file_type` values (its llama_ftype enum): the value for a file whose
// matrices are all of one tensor type, as its converter and quantizer write it, and each value's
// name, for `tandem inspect` (docs/formats.md § File types).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "tensor/type_traits.h"

namespace tandem {

// 0 f32, 1 f16, 2 q4_0, 7 q8_0, 32 bf16, ...; 1024 ("guessed") for a type with no llama_ftype.
uint32_t LlamaFileType(TensorType type);

// The name of file type `id` without llama.cpp's MOSTLY_ prefix ("Q4_K_M", "F16", "ALL_F32"),
// or nullopt for a number llama.cpp does not define (removed ones included).
std::optional<std::string_view> LlamaFileTypeName(uint32_t id);

}  // namespace tandem
