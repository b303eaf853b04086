// `tandem inspect FILE.gguf [--json] [--all]`: a GGUF file's header, metadata and tensor table.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "cli/commands.h"
#include "encoders/mmproj_file.h"
#include "gguf/gguf_reader.h"
#include "gguf/llama_file_type.h"

namespace tandem::cli {
namespace {

constexpr size_t kArrayPreview = 8;  // array elements shown unless --all

struct InspectOptions {
  std::string path;
  bool json = false;
  bool all = false;  // print arrays in full
};

using Json = nlohmann::ordered_json;

// For a multimodal projector file (general.architecture "clip"): its encoders, or why tandem
// cannot use it; empty for other files.
std::string MmprojSummary(const GgufFile& f) {
  const GgufValue* arch = f.Find("general.architecture");
  if (arch == nullptr || arch->type() != GgufType::kString || arch->AsString() != "clip") {
    return "";
  }
  try {
    return MmprojFile::Open(f.path())->Describe();
  } catch (const Error& e) {
    return std::string("unusable: ") + e.what();
  }
}

template <typename T>
Json Element(const GgufValue& v, uint64_t i) {
  if (v.is_array()) return Json(v.At<T>(i));
  return Json(v.As<T>());
}

// Element i of an array, or the scalar itself, as JSON.
Json ValueJson(const GgufValue& v, uint64_t i) {
  GgufType type = v.is_array() ? v.element_type() : v.type();
  switch (type) {
    case GgufType::kU8:
      return Element<uint8_t>(v, i);
    case GgufType::kI8:
      return Element<int8_t>(v, i);
    case GgufType::kU16:
      return Element<uint16_t>(v, i);
    case GgufType::kI16:
      return Element<int16_t>(v, i);
    case GgufType::kU32:
      return Element<uint32_t>(v, i);
    case GgufType::kI32:
      return Element<int32_t>(v, i);
    case GgufType::kF32:
      return Element<float>(v, i);
    case GgufType::kBool:
      return Element<bool>(v, i);
    case GgufType::kU64:
      return Element<uint64_t>(v, i);
    case GgufType::kI64:
      return Element<int64_t>(v, i);
    case GgufType::kF64:
      return Element<double>(v, i);
    case GgufType::kString:
      return Json(std::string(v.is_array() ? v.StringAt(i) : v.AsString()));
    case GgufType::kArray:
      break;
  }
  return Json();
}

// `general.file_type` as "15 (Q4_K_M)", its number alone for one llama.cpp does not name, or
// empty when the key is absent or not an integer.
std::string FileTypeText(const GgufFile& f) {
  const GgufValue* v = f.Find("general.file_type");
  if (v == nullptr || v->is_array() || !v->AsNonNegative()) return "";
  const uint64_t id = *v->AsNonNegative();
  const auto name = id <= UINT32_MAX ? LlamaFileTypeName(static_cast<uint32_t>(id)) : std::nullopt;
  return std::to_string(id) + (name ? " (" + std::string(*name) + ")" : "");
}

// How many tensors of each type the file holds: the type mix a quantization preset chose.
std::map<std::string, size_t> TypeCounts(const GgufFile& f) {
  std::map<std::string, size_t> counts;
  for (const TensorInfo& t : f.tensors()) ++counts[std::string(TensorTypeName(t.type))];
  return counts;
}

std::string Shape(const TensorInfo& t) {
  std::string out = "[";
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    if (d > 0) out += ", ";
    out += std::to_string(t.ne[d]);
  }
  return out + "]";
}

int PrintJson(const GgufFile& f, const InspectOptions& opt) {
  Json out;
  out["path"] = f.path();
  out["version"] = f.version();
  out["file_size"] = f.file_size();
  out["alignment"] = f.alignment();
  out["data_offset"] = f.data_offset();
  if (std::string ft = FileTypeText(f); !ft.empty()) out["file_type"] = ft;
  Json counts = Json::object();
  for (const auto& [type, n] : TypeCounts(f)) counts[type] = n;
  out["tensor_types"] = std::move(counts);
  if (std::string mmproj = MmprojSummary(f); !mmproj.empty()) out["mmproj"] = mmproj;
  Json metadata = Json::object();
  for (const GgufKv& kv : f.metadata().entries()) {
    Json entry;
    entry["type"] = kv.value.TypeName();
    if (kv.value.is_array()) {
      uint64_t n = kv.value.size();
      uint64_t shown = opt.all ? n : std::min<uint64_t>(n, kArrayPreview);
      Json values = Json::array();
      for (uint64_t i = 0; i < shown; ++i) values.push_back(ValueJson(kv.value, i));
      entry["length"] = n;
      entry["value"] = std::move(values);
      entry["truncated"] = shown < n;
    } else {
      entry["value"] = ValueJson(kv.value, 0);
    }
    metadata[kv.key] = std::move(entry);
  }
  out["metadata"] = std::move(metadata);
  Json tensors = Json::array();
  for (const TensorInfo& t : f.tensors()) {
    Json ne = Json::array();
    for (uint32_t d = 0; d < t.n_dims; ++d) ne.push_back(t.ne[d]);
    tensors.push_back({{"name", t.name},
                       {"type", std::string(TensorTypeName(t.type))},
                       {"shape", std::move(ne)},
                       {"n_elements", t.n_elements()},
                       {"bytes", t.nbytes},
                       {"offset", t.offset}});
  }
  out["tensors"] = std::move(tensors);
  std::string text = out.dump(2, ' ', false, Json::error_handler_t::replace);
  std::printf("%s\n", text.c_str());
  return 0;
}

int PrintText(const GgufFile& f, const InspectOptions& opt) {
  std::printf("%s: GGUF v%u, %llu bytes, alignment %u, data at offset %llu\n", f.path().c_str(),
              f.version(), static_cast<unsigned long long>(f.file_size()), f.alignment(),
              static_cast<unsigned long long>(f.data_offset()));
  if (std::string mmproj = MmprojSummary(f); !mmproj.empty()) {
    std::printf("multimodal projector (mmproj): %s\n", mmproj.c_str());
  }

  const auto& entries = f.metadata().entries();
  size_t key_width = 0;
  for (const GgufKv& kv : entries) key_width = std::max(key_width, kv.key.size());
  key_width = std::min<size_t>(key_width, 64);
  std::printf("\nmetadata: %zu keys\n", entries.size());
  for (const GgufKv& kv : entries) {
    std::string value = kv.value.ToString(opt.all ? 0 : kArrayPreview);
    std::printf("  %-*s  %-14s %s\n", static_cast<int>(key_width), GgufEscape(kv.key).c_str(),
                kv.value.TypeName().c_str(), value.c_str());
  }

  uint64_t total = 0;
  size_t name_width = 4;
  for (const TensorInfo& t : f.tensors()) {
    total += t.nbytes;
    name_width = std::max(name_width, t.name.size());
  }
  std::printf("\ntensors: %zu, %llu bytes of data\n", f.tensors().size(),
              static_cast<unsigned long long>(total));
  if (std::string ft = FileTypeText(f); !ft.empty()) std::printf("file type: %s\n", ft.c_str());
  if (!f.tensors().empty()) {
    std::string mix;
    for (const auto& [type, n] : TypeCounts(f)) {
      mix += (mix.empty() ? "" : ", ") + type + " x" + std::to_string(n);
    }
    std::printf("tensor types: %s\n", mix.c_str());
  }
  if (f.tensors().empty()) return 0;
  std::printf("  %-*s  %-8s %-24s %12s %12s\n", static_cast<int>(name_width), "name", "type",
              "shape", "bytes", "offset");
  for (const TensorInfo& t : f.tensors()) {
    std::printf("  %-*s  %-8s %-24s %12llu %12llu\n", static_cast<int>(name_width),
                GgufEscape(t.name).c_str(), std::string(TensorTypeName(t.type)).c_str(),
                Shape(t).c_str(), static_cast<unsigned long long>(t.nbytes),
                static_cast<unsigned long long>(t.offset));
  }
  return 0;
}

}  // namespace

void AddInspectCommand(CLI::App& app, CommandRunner& runner) {
  auto opt = std::make_shared<InspectOptions>();
  auto* sub = app.add_subcommand("inspect", "Print a GGUF file's metadata and tensor table");
  sub->add_option("file", opt->path, "GGUF file")->required();
  sub->add_flag("--json", opt->json, "Print one JSON object instead of text");
  sub->add_flag("--all", opt->all, "Print arrays in full (default: first 8 elements)");
  sub->callback([&runner, opt] {
    runner = [opt] {
      auto file = GgufFile::Open(opt->path);
      return opt->json ? PrintJson(*file, *opt) : PrintText(*file, *opt);
    };
  });
}

}  // namespace tandem::cli
