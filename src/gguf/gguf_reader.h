// Reads a GGUF v2/v3 file: header, metadata and tensor infos, every count/offset/size checked.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/mapped_file.h"
#include "gguf/gguf_metadata.h"
#include "tensor/type_traits.h"

namespace tandem {

inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr uint32_t kGgufMaxDims = 4;
inline constexpr size_t kGgufMaxTensorName = 63;  // bytes; gguf.cpp requires length < 64

struct TensorInfo {
  std::string name;
  TensorType type;
  uint32_t n_dims;             // 1..4 as stored (0 is allowed by the format: a scalar)
  std::array<uint64_t, 4> ne;  // elements per dimension, ne[0] innermost; unused dims are 1
  uint64_t offset;             // absolute byte offset of the data in the file (aligned)
  uint64_t nbytes;             // bytes of data, without padding

  uint64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
};

// A parsed GGUF file. Immutable after parsing; safe to read from several threads.
// Parsing accepts exactly what llama.cpp's gguf.cpp accepts, except that tensor data need not be
// packed in info order (only aligned and non-overlapping). Every failure throws tandem::Error:
// kCorrupt for broken bytes, kUnsupported for valid but unsupported files (version 1 or > 3,
// big-endian), naming the file, the field and the byte offset.
class GgufFile {
 public:
  // Memory-maps `path` (Error(kIo) if it cannot) and parses it.
  static std::unique_ptr<GgufFile> Open(const std::string& path);
  // Parses `bytes`, which the caller keeps alive and unchanged while the result is used. `name`
  // stands for the file in error messages.
  static std::unique_ptr<GgufFile> FromBytes(std::span<const uint8_t> bytes, std::string name);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute start of the data section
  uint64_t file_size() const { return bytes_.size(); }

  const GgufMetadata& metadata() const { return metadata_; }
  bool HasKey(std::string_view key) const { return metadata_.HasKey(key); }
  const GgufValue* Find(std::string_view key) const { return metadata_.Find(key); }
  std::string_view GetString(std::string_view key) const { return metadata_.GetString(key); }
  uint32_t GetU32(std::string_view key) const { return metadata_.GetU32(key); }
  int32_t GetI32(std::string_view key) const { return metadata_.GetI32(key); }
  float GetF32(std::string_view key) const { return metadata_.GetF32(key); }
  bool GetBool(std::string_view key) const { return metadata_.GetBool(key); }
  std::optional<uint32_t> FindU32(std::string_view key) const { return metadata_.FindU32(key); }
  std::optional<float> FindF32(std::string_view key) const { return metadata_.FindF32(key); }
  std::vector<std::string_view> GetStringArray(std::string_view key) const {
    return metadata_.GetStringArray(key);
  }
  std::vector<float> GetF32Array(std::string_view key) const { return metadata_.GetF32Array(key); }
  std::vector<int32_t> GetI32Array(std::string_view key) const {
    return metadata_.GetI32Array(key);
  }
  std::vector<uint32_t> GetU32PerLayer(std::string_view key, uint32_t n_layer) const {
    return metadata_.GetU32PerLayer(key, n_layer);
  }
  std::vector<bool> GetBoolPerLayer(std::string_view key, uint32_t n_layer) const {
    return metadata_.GetBoolPerLayer(key, n_layer);
  }

  // Tensors in file (info) order.
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const TensorInfo* FindTensor(std::string_view name) const;
  // The tensor's bytes [nbytes] inside the mapping; `info` must come from this file.
  const uint8_t* TensorData(const TensorInfo& info) const { return bytes_.data() + info.offset; }
  // The file's mapping (its ReadAt copies without mapping pages in), or nullptr for FromBytes.
  const MappedFile* mapping() const { return mapping_.get(); }
  std::span<const uint8_t> TensorBytes(const TensorInfo& info) const {
    return bytes_.subspan(info.offset, info.nbytes);
  }

 private:
  GgufFile(std::span<const uint8_t> bytes, std::string path)
      : path_(std::move(path)), bytes_(bytes), metadata_(path_) {}
  void Parse();

  std::unique_ptr<MappedFile> mapping_;  // null for FromBytes
  std::string path_;
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint32_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  GgufMetadata metadata_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;  // name -> position in tensors_
};

}  // namespace tandem
