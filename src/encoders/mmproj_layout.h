// The file-level keys of an mmproj GGUF as llama.cpp's converter writes them, whichever encoders
// the file holds; each encoder's own keys and dtype rules are in its folder's mmproj_layout.h.
#pragma once

#include <string>

#include "tensor/type_traits.h"

namespace tandem {

class GgufWriter;

// general.architecture "clip", general.type "mmproj", general.name `name`, general.file_type of
// `weight_type` (llama_ftype), general.quantization_version 2.
void WriteMmprojGeneralKeys(TensorType weight_type, const std::string& name, GgufWriter& writer);

}  // namespace tandem
