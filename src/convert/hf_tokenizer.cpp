#include "convert/hf_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, path.string() + ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) Fail(ErrorKind::kIo, path.string() + ": read failed");
  return text.str();
}

// `chat_template` as a string or a list of {"name", "template"} objects.
std::vector<std::pair<std::string, std::string>> TemplatesFromJson(const Json& value,
                                                                   const std::string& source) {
  std::vector<std::pair<std::string, std::string>> out;
  if (value.is_string()) {
    out.emplace_back("default", value.get<std::string>());
    return out;
  }
  if (!value.is_array()) {
    Fail(ErrorKind::kCorrupt, source + ": chat_template is neither a string nor a list");
  }
  for (const Json& entry : value) {
    if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") ||
        !entry["name"].is_string() || !entry["template"].is_string()) {
      Fail(ErrorKind::kCorrupt, source +
                                    ": chat_template entries need string 'name' and "
                                    "'template' fields");
    }
    out.emplace_back(entry["name"].get<std::string>(), entry["template"].get<std::string>());
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> LoadChatTemplates(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "chat_template.jinja", ec)) {
    return {{"default", ReadFile(dir / "chat_template.jinja")}};
  }
  for (const char* file : {"chat_template.json", "tokenizer_config.json"}) {
    const fs::path path = dir / file;
    if (!fs::exists(path, ec)) continue;
    Json root;
    try {
      root = Json::parse(ReadFile(path));
    } catch (const Json::exception& e) {
      Fail(ErrorKind::kCorrupt, path.string() + ": bad JSON: " + e.what());
    }
    if (root.is_object() && root.contains("chat_template") && !root["chat_template"].is_null()) {
      return TemplatesFromJson(root["chat_template"], path.string());
    }
  }
  return {};
}

}  // namespace

HfTokenizer LoadHfTokenizer(const std::string& dir, int fallback_bos, int fallback_eos,
                            int fallback_pad) {
  const fs::path json_path = fs::path(dir) / "tokenizer.json";
  std::error_code ec;
  if (!fs::exists(json_path, ec)) {
    Fail(ErrorKind::kNotFound, dir + ": no tokenizer.json (needed for the GGUF vocabulary)");
  }
  HfTokenizer t;
  t.vocab = LoadVocabFromTokenizerJson(json_path.string());
  const auto n = static_cast<int32_t>(t.vocab.size());
  auto fallback = [n](int32_t& id, int value) {
    if (id == kNoToken && value >= 0 && value < n) id = value;
  };
  fallback(t.vocab.bos_id, fallback_bos);
  fallback(t.vocab.eos_id, fallback_eos);
  fallback(t.vocab.pad_id, fallback_pad);
  t.chat_templates = LoadChatTemplates(dir);
  return t;
}

void AddHfTokenizerToGguf(const HfTokenizer& t, GgufWriter& w) {
  AddVocabToGguf(t.vocab, w);
  // llama.cpp's converter writes no pre-tokenizer name for gemma4 (its loader implies it).
  w.Remove("tokenizer.ggml.pre");
  std::vector<std::string> named;
  for (const auto& [name, text] : t.chat_templates) {
    if (name == "default") {
      w.SetString("tokenizer.chat_template", text);
    } else {
      w.SetString("tokenizer.chat_template." + name, text);
      named.push_back(name);
    }
  }
  if (!named.empty()) {
    w.Set("tokenizer.chat_templates", GgufValue::StringArray(std::span<const std::string>(named)));
  }
}

}  // namespace tandem
