// Writes GGUF v3 files that llama.cpp accepts: KVs in insertion order, tensors packed and aligned.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_metadata.h"
#include "gguf/gguf_reader.h"
#include "tensor/type_traits.h"

namespace tandem {

// Receives a tensor's bytes in order, in chunks of any size.
using GgufByteSink = std::function<void(std::span<const uint8_t> chunk)>;
// Produces one tensor's bytes by calling the sink (any number of times); called once per Write().
// The chunks must add up to exactly the tensor's byte size.
using GgufTensorProducer = std::function<void(const GgufByteSink& sink)>;

// Builds a GGUF file in memory (metadata and tensor list), then writes it in one go.
// The alignment is the u32 `general.alignment` key if set (a power of two), else 32.
// Not thread-safe.
class GgufWriter {
 public:
  GgufWriter() = default;

  // Metadata. Setting an existing key replaces its value and keeps its position.
  void Set(std::string_view key, GgufValue value) { metadata_.Set(key, std::move(value)); }
  void SetU32(std::string_view key, uint32_t v) { Set(key, GgufValue::U32(v)); }
  void SetI32(std::string_view key, int32_t v) { Set(key, GgufValue::I32(v)); }
  void SetU64(std::string_view key, uint64_t v) { Set(key, GgufValue::U64(v)); }
  void SetF32(std::string_view key, float v) { Set(key, GgufValue::F32(v)); }
  void SetBool(std::string_view key, bool v) { Set(key, GgufValue::Bool(v)); }
  void SetString(std::string_view key, std::string_view v) { Set(key, GgufValue::String(v)); }
  bool Remove(std::string_view key) { return metadata_.Remove(key); }
  // Sets every key of `source`, in its order (general.alignment included).
  void CopyMetadata(const GgufMetadata& source);
  const GgufMetadata& metadata() const { return metadata_; }

  // Adds a tensor with a copy of its bytes. `ne` has 0..4 dims (ne[0] innermost, a multiple of the
  // type's block size); `bytes` must be exactly the tensor's size. Throws Error(kInvalidArgument)
  // for a bad name (empty, >= 64 bytes, duplicate), shape, or size.
  void AddTensor(std::string_view name, TensorType type, std::span<const uint64_t> ne,
                 std::vector<uint8_t> bytes);
  // Adds a tensor whose bytes `producer` streams during Write(), so big tensors need not be held.
  void AddTensor(std::string_view name, TensorType type, std::span<const uint64_t> ne,
                 GgufTensorProducer producer);
  // Adds `info` from `file`, reading its bytes from the mapping at write time. `file` must outlive
  // Write().
  void AddTensorFrom(const GgufFile& file, const TensorInfo& info);
  size_t tensor_count() const { return tensors_.size(); }

  // Writes `path + ".tmp"`, then renames it over `path`, so a failed write (Error(kIo), or any
  // exception from a producer) never leaves a partial file at `path`; the temporary is removed.
  void Write(const std::string& path) const;

 private:
  struct Tensor {
    std::string name;
    TensorType type;
    uint32_t n_dims;
    std::array<uint64_t, 4> ne;
    uint64_t nbytes;
    GgufTensorProducer producer;
  };
  Tensor MakeTensor(std::string_view name, TensorType type, std::span<const uint64_t> ne) const;
  void Add(Tensor t);
  uint32_t Alignment() const;
  std::vector<uint8_t> EncodeHeader(uint32_t alignment) const;
  void WriteTo(std::FILE* out, const std::string& tmp_path, uint32_t alignment) const;

  GgufMetadata metadata_{"gguf writer"};
  std::vector<Tensor> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace tandem
