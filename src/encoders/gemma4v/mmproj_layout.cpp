#include "encoders/gemma4v/mmproj_layout.h"

#include "encoders/mmproj_layout.h"

namespace tandem {

TensorType MmprojTensorType(VisionTensorRole role, uint64_t row_length, TensorType weight_type) {
  switch (role) {
    case VisionTensorRole::kMatrix: {
      const uint32_t block = GetTensorTypeTraits(weight_type).block_size;
      return row_length % block == 0 ? weight_type : TensorType::kF16;
    }
    case VisionTensorRole::kPatchEmbedding:
      return weight_type == TensorType::kF16 ? TensorType::kF16 : TensorType::kF32;
    default:
      return TensorType::kF32;
  }
}

void WriteGemma4VisionMmprojKeys(const Gemma4VisionConfig& config, TensorType weight_type,
                                 const std::string& name, GgufWriter& w) {
  WriteMmprojGeneralKeys(weight_type, name, w);
  config.WriteToGguf(w);
}

}  // namespace tandem
