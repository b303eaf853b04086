// Binds named GGUF tensors to the kernels' views, checking shape and type on the way: every
// failure names the file, the tensor and what was expected.
#pragma once

#include <string>
#include <vector>

#include "kernels/embedding.h"
#include "kernels/matmul.h"

namespace tandem {

class GgufFile;
struct TensorInfo;

class TensorBinder {
 public:
  explicit TensorBinder(const GgufFile& file) : file_(file) {}

  const GgufFile& file() const { return file_; }

  // The tensor `name` with exactly the shape `ne` (GGUF order, missing dims are 1); nullptr when
  // absent and not `required`. Throws Error(kNotFound) / Error(kInvalidArgument) otherwise.
  const TensorInfo* Find(const std::string& name, const std::vector<uint64_t>& ne,
                         bool required = true) const;
  // A matrix the matmul kernels can multiply ([ne[1]] rows of ne[0]); Error(kUnsupported) else.
  kernels::WeightMatrix Matrix(const TensorInfo& t) const;
  // A row-gather table of a dequantizable type; rows of one over kPreadTablesAbove bytes are
  // read with pread (EmbeddingTable::file), others in place.
  static constexpr uint64_t kPreadTablesAbove = uint64_t{64} << 20;
  kernels::EmbeddingTable Embedding(const TensorInfo& t) const;
  // The whole tensor dequantized to f32.
  std::vector<float> Vector(const TensorInfo& t) const;

 private:
  const GgufFile& file_;
};

}  // namespace tandem
