#include "kernels/tensor_binder.h"

#include <algorithm>

#include "base/error.h"
#include "gguf/gguf_reader.h"
#include "tensor/dequantize.h"
#include "tensor/type_traits.h"

namespace tandem {
namespace {

std::string Shape(const std::vector<uint64_t>& ne) {
  std::string s = "{";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "}";
}

std::string Shape(const TensorInfo& t) {
  return Shape(std::vector<uint64_t>(t.ne.begin(), t.ne.begin() + std::max<uint32_t>(1, t.n_dims)));
}

}  // namespace

const TensorInfo* TensorBinder::Find(const std::string& name, const std::vector<uint64_t>& ne,
                                     bool required) const {
  const TensorInfo* t = file_.FindTensor(name);
  if (t == nullptr) {
    if (required) {
      Fail(ErrorKind::kNotFound, file_.path() + ": missing tensor '" + name + "' " + Shape(ne));
    }
    return nullptr;
  }
  for (size_t i = 0; i < 4; ++i) {
    const uint64_t want = i < ne.size() ? ne[i] : 1;
    if (t->ne[i] != want) {
      Fail(ErrorKind::kInvalidArgument, file_.path() + ": tensor '" + name + "' has shape " +
                                            Shape(*t) + ", expected " + Shape(ne));
    }
  }
  return t;
}

kernels::WeightMatrix TensorBinder::Matrix(const TensorInfo& t) const {
  if (!kernels::MatMulSupportsType(t.type)) {
    Fail(ErrorKind::kUnsupported, file_.path() + ": tensor '" + t.name + "' has type " +
                                      std::string(TensorTypeName(t.type)) +
                                      ", which tandem cannot multiply");
  }
  return kernels::DenseWeightMatrix(t.type, file_.TensorData(t), static_cast<int64_t>(t.ne[1]),
                                    static_cast<int64_t>(t.ne[0]));
}

kernels::EmbeddingTable TensorBinder::Embedding(const TensorInfo& t) const {
  if (!GetTensorTypeTraits(t.type).dequantizable) {
    Fail(ErrorKind::kUnsupported, file_.path() + ": tensor '" + t.name + "' has type " +
                                      std::string(TensorTypeName(t.type)) +
                                      ", which tandem cannot read");
  }
  // Rows of a large table (E2B's per-layer embeddings) are copied out with pread, so the ones a
  // prompt touches do not stay resident; a small one is read in place: each pread is a system
  // call, which costs a small model's decode step more than the table could ever hold resident.
  const MappedFile* read_with = t.nbytes > kPreadTablesAbove ? file_.mapping() : nullptr;
  return {t.type, file_.TensorData(t), static_cast<int64_t>(t.ne[1]), static_cast<int64_t>(t.ne[0]),
          read_with};
}

std::vector<float> TensorBinder::Vector(const TensorInfo& t) const {
  (void)Embedding(t);  // the same type check
  std::vector<float> out(t.n_elements());
  DequantizeRow(t.type, file_.TensorData(t), out.data(), static_cast<int64_t>(out.size()));
  return out;
}

}  // namespace tandem
