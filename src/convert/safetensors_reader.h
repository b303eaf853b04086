// Reads Hugging Face safetensors checkpoints (one file, or shards named by an index) without
// copying: every header is validated, tensors are views into read-only mappings (docs/formats.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"

namespace tandem {

// The element types tandem convert reads; every other valid safetensors dtype is kOther (its
// name is kept in SafetensorsTensor::dtype_name for messages).
enum class SafetensorsDtype { kF32, kF16, kBF16, kI64, kI32, kOther };

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kOther;
  std::string dtype_name;          // as in the header: "BF16", "F32", "I64", ...
  std::vector<uint64_t> shape;     // outermost first (PyTorch order); empty for a scalar
  std::span<const uint8_t> bytes;  // the data inside the file's mapping (no alignment promise)
  std::string file;                // path of the file that holds it, for messages

  uint64_t n_elements() const;
};

// Bytes of one element of `dtype` (F32 4, F16/BF16 2, I64 8, I32 4; 0 for kOther).
size_t SafetensorsDtypeBytes(SafetensorsDtype dtype);

// One .safetensors file. The header must be a JSON object (at most 100,000,000 bytes, starting
// with '{') whose entries have a known dtype, a shape of non-negative integers and data_offsets
// [begin, end] with end - begin = elements x element size, and whose data ranges tile the byte
// buffer exactly (no gaps, overlaps or trailing bytes). Anything else throws Error(kCorrupt)
// naming the file, the tensor or field and the byte offset; a truncated file is reported as such.
// Immutable after opening; safe to read from several threads.
class SafetensorsFile {
 public:
  // Maps and validates `path`; Error(kIo) if it cannot be opened.
  static std::unique_ptr<SafetensorsFile> Open(const std::string& path);
  // Validates `bytes`, which the caller keeps alive; `name` stands for the file in messages.
  static std::unique_ptr<SafetensorsFile> FromBytes(std::span<const uint8_t> bytes,
                                                    std::string name);

  const std::string& path() const { return path_; }
  // Tensors in data order.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const SafetensorsTensor* Find(std::string_view name) const;
  // The optional "__metadata__" object (string values only).
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile(std::span<const uint8_t> bytes, std::string path)
      : path_(std::move(path)), bytes_(bytes) {}
  void Parse();

  std::unique_ptr<MappedFile> mapping_;
  std::string path_;
  std::span<const uint8_t> bytes_;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// A checkpoint directory: `model.safetensors.index.json` and the shards its weight_map names,
// or a single `model.safetensors`. Throws Error(kNotFound) when neither exists or a shard named
// by the index is missing (naming the shard and a tensor it should hold), Error(kCorrupt) for a
// malformed index, a tensor the index places in a shard that lacks it, or a tensor name present
// in two shards, plus the errors of SafetensorsFile::Open.
class SafetensorsCheckpoint {
 public:
  static std::unique_ptr<SafetensorsCheckpoint> Open(const std::string& dir);

  // Every tensor, sorted by name.
  const std::vector<const SafetensorsTensor*>& tensors() const { return tensors_; }
  const SafetensorsTensor* Find(std::string_view name) const;
  size_t shard_count() const { return files_.size(); }

 private:
  SafetensorsCheckpoint() = default;
  void Add(std::unique_ptr<SafetensorsFile> file);
  void Index();

  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::vector<const SafetensorsTensor*> tensors_;
  std::map<std::string, const SafetensorsTensor*, std::less<>> by_name_;
};

}  // namespace tandem
