// Typed, error-reporting reads of one object of a Hugging Face JSON file (config.json,
// preprocessor_config.json): JSON null counts as absent (HF's None), and a field of the wrong
// type or range throws Error(kCorrupt) naming the source and the field's full path.
#pragma once

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "base/error.h"

namespace tandem {

// The whole file at `path`; Error(kIo) naming it when it cannot be read.
inline std::string ReadHfTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, path + ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) Fail(ErrorKind::kIo, path + ": read failed");
  return text.str();
}

// `text` parsed as a JSON object; Error(kCorrupt) naming `source` otherwise.
inline nlohmann::json ParseHfJsonObject(std::string_view text, const std::string& source) {
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    Fail(ErrorKind::kCorrupt, source + ": bad JSON: " + e.what());
  }
  if (!root.is_object()) Fail(ErrorKind::kCorrupt, source + ": not a JSON object");
  return root;
}

class HfJsonFields {
 public:
  HfJsonFields(const nlohmann::json& object, std::string prefix, const std::string& source)
      : object_(object), prefix_(std::move(prefix)), source_(source) {}

  bool Has(const char* key) const { return object_.contains(key); }
  const nlohmann::json* Find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::optional<int> OptInt(const char* key) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > (1 << 30)) {
      Bad(key, "must be an integer in [0, 2^30]");
    }
    return static_cast<int>(v->get<int64_t>());
  }
  int Int(const char* key, int fallback) const { return OptInt(key).value_or(fallback); }
  int RequiredInt(const char* key) const {
    auto v = OptInt(key);
    if (!v) Fail(ErrorKind::kCorrupt, source_ + ": " + Name(key) + " is missing");
    return *v;
  }
  std::optional<double> OptNumber(const char* key) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>())) Bad(key, "must be a number");
    return v->get<double>();
  }
  double Number(const char* key, double fallback) const {
    return OptNumber(key).value_or(fallback);
  }
  bool Bool(const char* key, bool fallback) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) Bad(key, "must be true or false");
    return v->get<bool>();
  }
  std::optional<std::string> OptString(const char* key) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_string()) Bad(key, "must be a string");
    return v->get<std::string>();
  }
  // A nested object, or nullopt.
  std::optional<HfJsonFields> Object(const char* key) const {
    const nlohmann::json* v = Find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_object()) Bad(key, "must be an object");
    return HfJsonFields(*v, Name(key) + ".", source_);
  }
  std::string Name(const char* key) const { return prefix_ + key; }
  [[noreturn]] void Bad(const char* key, const std::string& problem) const {
    const nlohmann::json* v = Find(key);
    Fail(ErrorKind::kCorrupt, source_ + ": " + Name(key) + " " + problem +
                                  (v ? ", got " + v->dump().substr(0, 80) : std::string()));
  }

 private:
  const nlohmann::json& object_;
  std::string prefix_;
  const std::string& source_;
};

}  // namespace tandem
