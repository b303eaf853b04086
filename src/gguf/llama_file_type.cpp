#include "gguf/llama_file_type.h"

namespace tandem {

uint32_t LlamaFileType(TensorType type) {
  switch (type) {
    case TensorType::kF32:
      return 0;
    case TensorType::kF16:
      return 1;
    case TensorType::kQ4_0:
      return 2;
    case TensorType::kQ4_1:
      return 3;
    case TensorType::kQ8_0:
      return 7;
    case TensorType::kQ5_0:
      return 8;
    case TensorType::kQ5_1:
      return 9;
    case TensorType::kQ4_K:
      return 15;
    case TensorType::kQ5_K:
      return 17;
    case TensorType::kQ6_K:
      return 18;
    case TensorType::kBF16:
      return 32;
    default:
      return 1024;  // "guessed": no single llama ftype
  }
}

}  // namespace tandem
