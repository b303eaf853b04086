#include "convert/safetensors_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/log.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // the reference implementation's limit
constexpr uint64_t kMaxElements = uint64_t{1} << 48;
constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

struct DtypeInfo {
  const char* name;
  SafetensorsDtype dtype;
  uint32_t bits;
};

constexpr DtypeInfo kDtypes[] = {
    {"F32", SafetensorsDtype::kF32, 32},          {"F16", SafetensorsDtype::kF16, 16},
    {"BF16", SafetensorsDtype::kBF16, 16},        {"I64", SafetensorsDtype::kI64, 64},
    {"I32", SafetensorsDtype::kI32, 32},          {"BOOL", SafetensorsDtype::kOther, 8},
    {"U8", SafetensorsDtype::kOther, 8},          {"I8", SafetensorsDtype::kOther, 8},
    {"I16", SafetensorsDtype::kOther, 16},        {"U16", SafetensorsDtype::kOther, 16},
    {"U32", SafetensorsDtype::kOther, 32},        {"U64", SafetensorsDtype::kOther, 64},
    {"F64", SafetensorsDtype::kOther, 64},        {"C64", SafetensorsDtype::kOther, 64},
    {"F8_E5M2", SafetensorsDtype::kOther, 8},     {"F8_E4M3", SafetensorsDtype::kOther, 8},
    {"F8_E8M0", SafetensorsDtype::kOther, 8},     {"F8_E4M3FNUZ", SafetensorsDtype::kOther, 8},
    {"F8_E5M2FNUZ", SafetensorsDtype::kOther, 8}, {"F4", SafetensorsDtype::kOther, 4},
    {"F6_E2M3", SafetensorsDtype::kOther, 6},     {"F6_E3M2", SafetensorsDtype::kOther, 6},
};

const DtypeInfo* FindDtype(std::string_view name) {
  for (const DtypeInfo& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

std::string ShapeString(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// A non-negative JSON integer, or nullopt.
std::optional<uint64_t> JsonU64(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0)
    return static_cast<uint64_t>(v.get<int64_t>());
  return std::nullopt;
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, path + ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) Fail(ErrorKind::kIo, path + ": read failed");
  return text.str();
}

}  // namespace

uint64_t SafetensorsTensor::n_elements() const {
  uint64_t n = 1;
  for (uint64_t d : shape) n *= d;
  return n;
}

size_t SafetensorsDtypeBytes(SafetensorsDtype dtype) {
  switch (dtype) {
    case SafetensorsDtype::kF32:
    case SafetensorsDtype::kI32:
      return 4;
    case SafetensorsDtype::kF16:
    case SafetensorsDtype::kBF16:
      return 2;
    case SafetensorsDtype::kI64:
      return 8;
    case SafetensorsDtype::kOther:
      return 0;
  }
  return 0;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::Open(const std::string& path) {
  auto mapping = std::make_unique<MappedFile>(path);
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile(mapping->bytes(), path));
  file->mapping_ = std::move(mapping);
  file->Parse();
  return file;
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::FromBytes(std::span<const uint8_t> bytes,
                                                            std::string name) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile(bytes, std::move(name)));
  file->Parse();
  return file;
}

const SafetensorsTensor* SafetensorsFile::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

void SafetensorsFile::Parse() {
  const std::string& p = path_;
  auto corrupt = [&p](const std::string& what) { Fail(ErrorKind::kCorrupt, p + ": " + what); };
  if (bytes_.size() < 8) {
    corrupt("file is " + std::to_string(bytes_.size()) +
            " bytes, too short for the 8-byte header length (truncated?)");
  }
  uint64_t n_header = 0;
  std::memcpy(&n_header, bytes_.data(), 8);
  if (n_header > kMaxHeaderBytes) {
    corrupt("header length at byte 0 is " + std::to_string(n_header) + ", above the limit of " +
            std::to_string(kMaxHeaderBytes) + " (not a safetensors file?)");
  }
  if (n_header > bytes_.size() - 8) {
    corrupt("truncated: the header length at byte 0 is " + std::to_string(n_header) + " but only " +
            std::to_string(bytes_.size() - 8) + " bytes follow");
  }
  const std::string_view header(reinterpret_cast<const char*>(bytes_.data()) + 8, n_header);
  if (header.empty() || header[0] != '{') {
    corrupt("header at byte 8 does not start with '{' (not a JSON object)");
  }
  // Parse, rejecting duplicate tensor names (a JSON parser would silently keep the last one).
  std::set<std::string> seen;
  std::string duplicate;
  Json root;
  try {
    root = Json::parse(
        header.begin(), header.end(), [&](int depth, Json::parse_event_t event, Json& parsed) {
          if (event == Json::parse_event_t::key && depth == 1 && parsed.is_string()) {
            if (!seen.insert(parsed.get<std::string>()).second && duplicate.empty()) {
              duplicate = parsed.get<std::string>();
            }
          }
          return true;
        });
  } catch (const Json::exception& e) {
    corrupt("bad JSON header (bytes 8.." + std::to_string(8 + n_header) + "): " + e.what());
  }
  if (!root.is_object()) corrupt("header at byte 8 is not a JSON object");
  if (!duplicate.empty()) corrupt("header names tensor '" + duplicate + "' twice");

  const uint64_t buffer_size = bytes_.size() - 8 - n_header;
  const uint8_t* buffer = bytes_.data() + 8 + n_header;
  struct Range {
    uint64_t begin, end;
    size_t tensor;
  };
  std::vector<Range> ranges;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& name = it.key();
    const Json& entry = it.value();
    if (name == "__metadata__") {
      if (!entry.is_object()) corrupt("header field '__metadata__' is not an object");
      for (auto m = entry.begin(); m != entry.end(); ++m) {
        if (!m.value().is_string()) {
          corrupt("header field '__metadata__." + m.key() + "' is not a string");
        }
        metadata_[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    const std::string at = "tensor '" + name + "': ";
    if (!entry.is_object()) corrupt(at + "header entry is not an object");
    auto dtype_it = entry.find("dtype");
    auto shape_it = entry.find("shape");
    auto offsets_it = entry.find("data_offsets");
    if (dtype_it == entry.end() || !dtype_it->is_string()) corrupt(at + "dtype is missing");
    if (shape_it == entry.end() || !shape_it->is_array()) corrupt(at + "shape is missing");
    if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2) {
      corrupt(at + "data_offsets must be [begin, end]");
    }
    SafetensorsTensor t;
    t.name = name;
    t.dtype_name = dtype_it->get<std::string>();
    t.file = path_;
    const DtypeInfo* info = FindDtype(t.dtype_name);
    if (info == nullptr) corrupt(at + "unknown dtype '" + t.dtype_name + "'");
    t.dtype = info->dtype;
    uint64_t n = 1;
    for (const Json& d : *shape_it) {
      auto v = JsonU64(d);
      if (!v) corrupt(at + "shape entries must be non-negative integers");
      if (*v != 0 && n > kMaxElements / *v) corrupt(at + "shape is implausibly large");
      n *= *v;
      t.shape.push_back(*v);
    }
    auto begin = JsonU64((*offsets_it)[0]);
    auto end = JsonU64((*offsets_it)[1]);
    if (!begin || !end || *begin > *end) {
      corrupt(at + "data_offsets must be non-negative integers with begin <= end");
    }
    if ((n * info->bits) % 8 != 0) corrupt(at + "element count does not fill whole bytes");
    const uint64_t want = n * info->bits / 8;
    if (*end - *begin != want) {
      corrupt(at + "data_offsets [" + std::to_string(*begin) + ", " + std::to_string(*end) +
              ") hold " + std::to_string(*end - *begin) + " bytes, but dtype " + t.dtype_name +
              " shape " + ShapeString(t.shape) + " needs " + std::to_string(want));
    }
    ranges.push_back({*begin, *end, tensors_.size()});
    tensors_.push_back(std::move(t));
  }

  // The data ranges must tile [0, buffer_size) exactly.
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t pos = 0;
  for (const Range& r : ranges) {
    const std::string& name = tensors_[r.tensor].name;
    if (r.begin != pos) {
      corrupt("tensor '" + name + "': data starts at buffer byte " + std::to_string(r.begin) +
              (r.begin < pos ? ", overlapping the previous tensor (ends at "
                             : ", leaving a gap after the previous tensor (ends at ") +
              std::to_string(pos) + ")");
    }
    if (r.end > buffer_size) {
      corrupt("truncated: tensor '" + name + "' ends at file byte " +
              std::to_string(8 + n_header + r.end) + " but the file has " +
              std::to_string(bytes_.size()) + " bytes");
    }
    pos = r.end;
  }
  if (pos != buffer_size) {
    corrupt(std::to_string(buffer_size - pos) + " unused bytes after the last tensor (file byte " +
            std::to_string(8 + n_header + pos) + ")");
  }
  // Keep tensors in data order.
  std::vector<SafetensorsTensor> ordered;
  ordered.reserve(tensors_.size());
  for (const Range& r : ranges) {
    SafetensorsTensor t = std::move(tensors_[r.tensor]);
    t.bytes = {buffer + r.begin, static_cast<size_t>(r.end - r.begin)};
    ordered.push_back(std::move(t));
  }
  tensors_ = std::move(ordered);
  for (size_t i = 0; i < tensors_.size(); ++i) index_[tensors_[i].name] = i;
}

std::unique_ptr<SafetensorsCheckpoint> SafetensorsCheckpoint::Open(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    Fail(ErrorKind::kNotFound, dir + ": not a directory (expected a Hugging Face checkpoint)");
  }
  std::unique_ptr<SafetensorsCheckpoint> ckpt(new SafetensorsCheckpoint());
  const fs::path index_path = fs::path(dir) / kIndexName;
  const fs::path single_path = fs::path(dir) / kSingleName;
  if (!fs::exists(index_path, ec)) {
    if (!fs::exists(single_path, ec)) {
      Fail(ErrorKind::kNotFound,
           dir + ": no " + kSingleName + " or " + kIndexName + " (safetensors checkpoint)");
    }
    ckpt->Add(SafetensorsFile::Open(single_path.string()));
    ckpt->Index();
    return ckpt;
  }

  const std::string ipath = index_path.string();
  Json index;
  try {
    index = Json::parse(ReadTextFile(ipath));
  } catch (const Json::exception& e) {
    Fail(ErrorKind::kCorrupt, ipath + ": bad JSON: " + e.what());
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object()) {
    Fail(ErrorKind::kCorrupt, ipath + ": missing the 'weight_map' object");
  }
  // shard file -> tensors the index places there
  std::map<std::string, std::vector<std::string>> shards;
  for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
    if (!it.value().is_string()) {
      Fail(ErrorKind::kCorrupt, ipath + ": weight_map['" + it.key() + "'] is not a file name");
    }
    const std::string shard = it.value().get<std::string>();
    const fs::path rel(shard);
    bool escapes = rel.empty() || rel.is_absolute();
    for (const auto& part : rel) escapes |= part == "..";
    if (escapes) {
      Fail(ErrorKind::kCorrupt, ipath + ": weight_map['" + it.key() + "'] = '" + shard +
                                    "' is not a file inside the checkpoint directory");
    }
    shards[shard].push_back(it.key());
  }
  if (shards.empty()) Fail(ErrorKind::kCorrupt, ipath + ": weight_map is empty");
  for (const auto& [shard, names] : shards) {
    const fs::path path = fs::path(dir) / shard;
    if (!fs::exists(path, ec)) {
      Fail(ErrorKind::kNotFound, ipath + ": shard '" + shard + "' (holding '" + names.front() +
                                     "' and " + std::to_string(names.size() - 1) +
                                     " more tensors) does not exist");
    }
    auto file = SafetensorsFile::Open(path.string());
    for (const std::string& name : names) {
      if (file->Find(name) == nullptr) {
        Fail(ErrorKind::kCorrupt, ipath + ": weight_map places tensor '" + name + "' in '" + shard +
                                      "', which does not contain it");
      }
    }
    if (file->tensors().size() > names.size()) {
      LogWarn(path.string() + ": " + std::to_string(file->tensors().size() - names.size()) +
              " tensors not listed in " + kIndexName + " (used anyway)");
    }
    ckpt->Add(std::move(file));
  }
  ckpt->Index();
  return ckpt;
}

void SafetensorsCheckpoint::Add(std::unique_ptr<SafetensorsFile> file) {
  files_.push_back(std::move(file));
}

void SafetensorsCheckpoint::Index() {
  for (const auto& file : files_) {
    for (const SafetensorsTensor& t : file->tensors()) {
      auto [it, inserted] = by_name_.emplace(t.name, &t);
      if (!inserted) {
        Fail(ErrorKind::kCorrupt,
             "tensor '" + t.name + "' is in both " + it->second->file + " and " + t.file);
      }
    }
  }
  for (const auto& [name, t] : by_name_) tensors_.push_back(t);
}

const SafetensorsTensor* SafetensorsCheckpoint::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

}  // namespace tandem
