#include "encoders/mmproj_layout.h"

#include "encoders/mmproj_keys.h"
#include "gguf/gguf_writer.h"
#include "gguf/llama_file_type.h"

namespace tandem {

void WriteMmprojGeneralKeys(TensorType weight_type, const std::string& name, GgufWriter& w) {
  w.SetString("general.architecture", mmproj::kArchitecture);
  w.SetString("general.type", mmproj::kFileType);
  w.SetString("general.name", name);
  w.SetU32("general.file_type", LlamaFileType(weight_type));
  w.SetU32("general.quantization_version", 2);
}

}  // namespace tandem
