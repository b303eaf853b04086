#include "encoders/gemma4a/mmproj_layout.h"

namespace tandem {

TensorType AudioMmprojTensorType(AudioTensorRole role, uint64_t row_length,
                                 TensorType weight_type) {
  if (role != AudioTensorRole::kMatrix) return TensorType::kF32;
  const uint32_t block = GetTensorTypeTraits(weight_type).block_size;
  return row_length % block == 0 ? weight_type : TensorType::kF16;
}

}  // namespace tandem
