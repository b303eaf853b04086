// GGUF parsing in one pass (docs/formats.md): every count, length and offset is checked against the
// bytes that remain, with overflow-safe arithmetic, before anything is allocated or read.
#include "gguf/gguf_reader.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <limits>

#include "gguf/gguf_cursor.h"

namespace tandem {
namespace {

constexpr uint64_t kMaxI64 = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
// Smallest encodings, used to reject impossible counts before looping over them.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;          // key length, 1-byte key, type, u8 value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%08x", v);
  return buf;
}

// Rejects a count that cannot fit in the remaining bytes at `min_bytes` per item.
void CheckCount(const GgufCursor& cur, const GgufField& field, size_t at, uint64_t count,
                uint64_t min_bytes, std::string_view what) {
  if (count > cur.remaining() / min_bytes) {
    cur.Fail(field, at,
             std::to_string(count) + " " + std::string(what) + " cannot fit in the " +
                 std::to_string(cur.remaining()) + " bytes left in the file");
  }
}

// Reads the value of the KV record `kv` ("kv[3] 'key'") whose type id was read at `type_at`.
GgufValue ReadValue(GgufCursor& cur, uint32_t type_id, const std::string& kv, size_t type_at) {
  if (type_id >= kGgufTypeIdLimit) {
    cur.Fail({kv + " type"}, type_at, "unknown value type id " + std::to_string(type_id));
  }
  const std::string field = kv + " value";
  auto type = static_cast<GgufType>(type_id);
  if (type == GgufType::kString) return GgufValue::String(cur.ReadString({field}));
  if (type != GgufType::kArray) {
    size_t at = cur.offset();
    std::span<const uint8_t> b = cur.Take(GgufScalarBytes(type), {field});
    if (type == GgufType::kBool && b[0] > 1) {
      cur.Fail({field}, at, "bool is " + std::to_string(b[0]) + ", expected 0 or 1");
    }
    return GgufValue::ScalarFromBytes(type, b);
  }

  size_t element_at = cur.offset();
  uint32_t element_id = cur.Read<uint32_t>({field + " element type"});
  if (element_id >= kGgufTypeIdLimit) {
    cur.Fail({field + " element type"}, element_at,
             "unknown array element type id " + std::to_string(element_id));
  }
  auto element = static_cast<GgufType>(element_id);
  if (element == GgufType::kArray) {
    cur.Fail({field + " element type"}, element_at, "nested arrays are not supported",
             ErrorKind::kUnsupported);
  }
  size_t count_at = cur.offset();
  uint64_t count = cur.Read<uint64_t>({field + " count"});
  if (element == GgufType::kString) {
    CheckCount(cur, {field + " count"}, count_at, count, 8, "strings");
    std::vector<std::string_view> items;
    items.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      items.push_back(cur.ReadString({field, static_cast<int64_t>(i)}));
    }
    return GgufValue::StringArray(items);
  }
  uint64_t size = GgufScalarBytes(element);
  CheckCount(cur, {field + " count"}, count_at, count, size,
             "elements of " + GgufTypeName(element));
  size_t data_at = cur.offset();
  std::span<const uint8_t> b = cur.Take(count * size, {field});
  if (element == GgufType::kBool) {
    for (size_t i = 0; i < b.size(); ++i) {
      if (b[i] > 1) {
        cur.Fail({field, static_cast<int64_t>(i)}, data_at + i,
                 "bool is " + std::to_string(b[i]) + ", expected 0 or 1");
      }
    }
  }
  return GgufValue::NumericArrayFromBytes(element, b);
}

}  // namespace

std::unique_ptr<GgufFile> GgufFile::Open(const std::string& path) {
  auto mapping = std::make_unique<MappedFile>(path);
  std::unique_ptr<GgufFile> file(new GgufFile(mapping->bytes(), path));
  file->mapping_ = std::move(mapping);
  file->Parse();
  return file;
}

std::unique_ptr<GgufFile> GgufFile::FromBytes(std::span<const uint8_t> bytes, std::string name) {
  std::unique_ptr<GgufFile> file(new GgufFile(bytes, std::move(name)));
  file->Parse();
  return file;
}

const TensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

void GgufFile::Parse() {
  GgufCursor cur(bytes_, path_);

  // Header.
  std::span<const uint8_t> magic = cur.Take(4, {"magic"});
  if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
    std::string_view got(reinterpret_cast<const char*>(magic.data()), 4);
    cur.Fail({"magic"}, 0,
             "not a GGUF file (magic \"" + GgufEscape(got) + "\", expected \"GGUF\")");
  }
  version_ = cur.Read<uint32_t>({"version"});
  if (version_ != 0 && (version_ & 0xFFFF) == 0) {
    cur.Fail({"version"}, 4,
             "file is byte-swapped (version reads as " + Hex32(version_) +
                 "): big-endian GGUF files are not supported",
             ErrorKind::kUnsupported);
  }
  if (version_ == 0) cur.Fail({"version"}, 4, "invalid version 0");
  if (version_ == 1 || version_ > 3) {
    cur.Fail({"version"}, 4,
             "version " + std::to_string(version_) + " is not supported (only 2 and 3)",
             ErrorKind::kUnsupported);
  }
  size_t at = cur.offset();
  uint64_t n_tensors = cur.Read<uint64_t>({"tensor_count"});
  if (n_tensors > kMaxI64) cur.Fail({"tensor_count"}, at, "tensor_count is negative as int64");
  at = cur.offset();
  uint64_t n_kv = cur.Read<uint64_t>({"kv_count"});
  if (n_kv > kMaxI64) cur.Fail({"kv_count"}, at, "kv_count is negative as int64");
  CheckCount(cur, {"kv_count"}, at, n_kv, kMinKvBytes, "metadata entries");
  CheckCount(cur, {"tensor_count"}, 8, n_tensors, kMinTensorInfoBytes, "tensor infos");

  // Metadata.
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string kv = "kv[" + std::to_string(i) + "]";
    size_t key_at = cur.offset();
    std::string_view key = cur.ReadString({kv + " key"});
    if (key.empty()) cur.Fail({kv + " key"}, key_at, "empty key");
    std::string field = kv + " '" + GgufEscape(key) + "'";
    if (metadata_.HasKey(key)) cur.Fail({field}, key_at, "duplicate key");
    size_t type_at = cur.offset();
    uint32_t type_id = cur.Read<uint32_t>({field + " type"});
    size_t value_at = cur.offset();
    GgufValue value = ReadValue(cur, type_id, field, type_at);
    if (key == "general.alignment") {
      if (value.type() != GgufType::kU32) {
        cur.Fail({field + " value"}, value_at, "has type " + value.TypeName() + ", expected u32");
      }
      uint32_t a = value.As<uint32_t>();
      if (!std::has_single_bit(a)) {
        cur.Fail({field + " value"}, value_at,
                 "alignment " + std::to_string(a) + " is not a power of two");
      }
      alignment_ = a;
    }
    metadata_.Set(key, std::move(value));
  }

  // Tensor infos. Offsets are relative to the data section until it is known.
  std::vector<size_t> offset_field_at;  // [n_tensors] where each offset was read, for messages
  for (uint64_t i = 0; i < n_tensors; ++i) {
    std::string tensor = "tensor[" + std::to_string(i) + "]";
    size_t name_at = cur.offset();
    std::string_view name = cur.ReadString({tensor + " name"});
    if (name.size() > kGgufMaxTensorName) {
      cur.Fail({tensor + " name"}, name_at,
               "name '" + GgufEscape(name, 80) + "' is " + std::to_string(name.size()) +
                   " bytes, the limit is " + std::to_string(kGgufMaxTensorName));
    }
    std::string label = "tensor '" + GgufEscape(name) + "'";
    if (tensor_index_.count(name) != 0) cur.Fail({label}, name_at, "duplicate tensor name");

    TensorInfo info{std::string(name), TensorType::kF32, 0, {1, 1, 1, 1}, 0, 0};
    at = cur.offset();
    info.n_dims = cur.Read<uint32_t>({label + " n_dims"});
    if (info.n_dims > kGgufMaxDims) {
      cur.Fail({label + " n_dims"}, at,
               std::to_string(info.n_dims) + " dimensions, the limit is " +
                   std::to_string(kGgufMaxDims));
    }
    uint64_t n_elements = 1;
    const std::string ne_name = label + " ne";
    size_t ne0_at = cur.offset();
    for (uint32_t d = 0; d < info.n_dims; ++d) {
      at = cur.offset();
      GgufField ne_field{ne_name, d};
      info.ne[d] = cur.Read<uint64_t>(ne_field);
      if (info.ne[d] > kMaxI64) cur.Fail(ne_field, at, "negative as int64");
      if (__builtin_mul_overflow(n_elements, info.ne[d], &n_elements) || n_elements > kMaxI64) {
        cur.Fail(ne_field, at, "the element count overflows int64");
      }
    }
    at = cur.offset();
    uint32_t type_id = cur.Read<uint32_t>({label + " type"});
    std::optional<TensorTypeTraits> traits = FindTensorTypeTraits(type_id);
    if (!traits) {
      cur.Fail({label + " type"}, at,
               "unknown or removed tensor type id " + std::to_string(type_id),
               ErrorKind::kUnsupported);
    }
    info.type = traits->type;
    if (info.ne[0] % traits->block_size != 0) {
      cur.Fail({ne_name, 0}, ne0_at,
               std::to_string(info.ne[0]) + " is not a multiple of the " +
                   std::string(traits->name) + " block size " + std::to_string(traits->block_size));
    }
    if (__builtin_mul_overflow(n_elements / traits->block_size, uint64_t{traits->block_bytes},
                               &info.nbytes)) {
      cur.Fail({label + " type"}, at, "the byte size overflows uint64");
    }
    at = cur.offset();
    info.offset = cur.Read<uint64_t>({label + " offset"});
    if (info.offset % alignment_ != 0) {
      cur.Fail({label + " offset"}, at,
               "offset " + std::to_string(info.offset) + " is not a multiple of the alignment " +
                   std::to_string(alignment_));
    }
    offset_field_at.push_back(at);
    tensor_index_.emplace(info.name, tensors_.size());
    tensors_.push_back(std::move(info));
  }

  // Data section: aligned start; every tensor inside the file; no two tensors' bytes overlap.
  data_offset_ = cur.offset() + (alignment_ - cur.offset() % alignment_) % alignment_;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    TensorInfo& t = tensors_[i];
    uint64_t relative = t.offset;
    uint64_t end = 0;
    if (__builtin_add_overflow(relative, data_offset_, &t.offset) ||
        __builtin_add_overflow(t.offset, t.nbytes, &end) || end > bytes_.size()) {
      cur.Fail({"tensor '" + GgufEscape(t.name) + "' offset"}, offset_field_at[i],
               "its " + std::to_string(t.nbytes) + " bytes at file offset " +
                   std::to_string(data_offset_) + " + " + std::to_string(relative) +
                   " extend past the end of the file (" + std::to_string(bytes_.size()) +
                   " bytes)");
    }
  }
  std::vector<size_t> order(tensors_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  size_t last = 0;  // the non-empty tensor whose data ends furthest so far
  uint64_t last_end = 0;
  for (size_t i : order) {
    const TensorInfo& t = tensors_[i];
    if (t.nbytes == 0) continue;
    if (t.offset < last_end) {
      cur.Fail({"tensor '" + GgufEscape(t.name) + "' offset"}, offset_field_at[i],
               "data at file offset " + std::to_string(t.offset) + " overlaps tensor '" +
                   GgufEscape(tensors_[last].name) + "'");
    }
    last = i;
    last_end = t.offset + t.nbytes;
  }
}

}  // namespace tandem
