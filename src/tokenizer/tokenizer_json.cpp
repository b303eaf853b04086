// Reads a Hugging Face tokenizer.json (+ tokenizer_config.json) into a Vocab, for conversion.
#include "tokenizer/tokenizer_json.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "base/log.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kSpaceEscape = "\xE2\x96\x81";
constexpr float kPlaceholderScore = -1000.0f;
constexpr size_t kMaxIdGap = 1 << 16;  // more unassigned ids than this means a corrupt file

// Gemma 4 markup that must render in output so chat parsers see it (docs/gemma4.md § Tokenizer).
constexpr std::string_view kRenderedMarkup[] = {
    "<|channel>",       "<channel|>",       "<|tool_call>", "<tool_call|>",
    "<|tool_response>", "<tool_response|>", "<|\"|>",
};

[[noreturn]] void FailField(ErrorKind kind, const std::string& source, const std::string& field,
                            const std::string& problem) {
  Fail(kind, source + ": " + field + ": " + problem);
}

Json Parse(std::string_view text, const std::string& source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    Fail(ErrorKind::kCorrupt, source + ": not valid JSON (" + e.what() + ")");
  }
}

const Json* FindField(const Json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string TypeOf(const Json& component) {
  const Json* type = FindField(component, "type");
  return type != nullptr && type->is_string() ? type->get<std::string>() : std::string();
}

bool IsSpaceEscape(const Json& normalizer) {
  if (TypeOf(normalizer) != "Replace") return false;
  const Json* pattern = FindField(normalizer, "pattern");
  const Json* content = FindField(normalizer, "content");
  const Json* from = pattern != nullptr ? FindField(*pattern, "String") : nullptr;
  return from != nullptr && content != nullptr && *from == " " && content->is_string() &&
         content->get<std::string>() == kSpaceEscape;
}

// The normalizer must be exactly "replace every space by U+2581" (alone or as a one-element
// Sequence): that is the only normalisation Tokenizer applies.
void CheckNormalizer(const Json& root, const std::string& source) {
  const Json* normalizer = FindField(root, "normalizer");
  if (normalizer == nullptr) {
    FailField(ErrorKind::kUnsupported, source, "normalizer",
              "absent; tandem needs the Replace(' ' -> U+2581) normalizer of Gemma tokenizers");
  }
  if (IsSpaceEscape(*normalizer)) return;
  const Json* list = FindField(*normalizer, "normalizers");
  if (TypeOf(*normalizer) == "Sequence" && list != nullptr && list->is_array() &&
      list->size() == 1 && IsSpaceEscape((*list)[0])) {
    return;
  }
  FailField(ErrorKind::kUnsupported, source, "normalizer",
            "'" + normalizer->dump().substr(0, 200) +
                "' is not the Replace(' ' -> U+2581) normalizer tandem implements");
}

// Pre-tokenizers other than the no-op Split on ' ' (spaces are escaped before it runs) are not
// reproduced; say so rather than fail, since the newline pre-split is what Gemma 4 uses.
void CheckPreTokenizer(const Json& root, const std::string& source) {
  const Json* pre = FindField(root, "pre_tokenizer");
  if (pre == nullptr) return;
  const Json* pattern = FindField(*pre, "pattern");
  const Json* text = pattern != nullptr ? FindField(*pattern, "String") : nullptr;
  if (TypeOf(*pre) == "Split" && text != nullptr && *text == " ") return;
  LogWarn(source + ": pre_tokenizer '" + pre->dump().substr(0, 200) +
          "' is not applied; tandem only splits runs of newlines before BPE");
}

void CheckModel(const Json& model, const std::string& source) {
  const std::string type = TypeOf(model);
  if (!type.empty() && type != "BPE") {
    FailField(ErrorKind::kUnsupported, source, "model.type", "'" + type + "' is not BPE");
  }
  const Json* vocab = FindField(model, "vocab");
  const Json* merges = FindField(model, "merges");
  if (vocab == nullptr || !vocab->is_object()) {
    FailField(ErrorKind::kCorrupt, source, "model.vocab", "missing or not an object");
  }
  if (merges == nullptr || !merges->is_array()) {
    FailField(ErrorKind::kCorrupt, source, "model.merges", "missing or not an array");
  }
  if (const Json* ignore = FindField(model, "ignore_merges");
      ignore != nullptr && *ignore == true) {
    FailField(ErrorKind::kUnsupported, source, "model.ignore_merges", "true is not supported");
  }
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const Json* value = FindField(model, affix);
    if (value != nullptr && !(value->is_string() && value->get<std::string>().empty())) {
      FailField(ErrorKind::kUnsupported, source, std::string("model.") + affix,
                "subword affixes are not supported");
    }
  }
  const Json* fallback = FindField(model, "byte_fallback");
  if (fallback == nullptr || *fallback != true) {
    FailField(ErrorKind::kUnsupported, source, "model.byte_fallback",
              "tandem implements byte-fallback BPE only");
  }
}

int32_t ParseId(const Json& value, const std::string& source, const std::string& field) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > INT32_MAX) {
    FailField(ErrorKind::kCorrupt, source, field, "'" + value.dump() + "' is not a token id");
  }
  return static_cast<int32_t>(value.get<int64_t>());
}

bool IsByteTokenText(std::string_view t) {
  const auto hex = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
  };
  return t.size() == 6 && t.substr(0, 3) == "<0x" && hex(t[3]) && hex(t[4]) && t[5] == '>';
}

// A *_token entry of tokenizer_config.json: a string or {"content": string}.
std::optional<std::string> ConfigTokenText(const Json& config, const char* name) {
  const Json* value = FindField(config, name);
  if (value == nullptr) return std::nullopt;
  if (value->is_string()) return value->get<std::string>();
  const Json* content = FindField(*value, "content");
  if (content != nullptr && content->is_string()) return content->get<std::string>();
  return std::nullopt;
}

// Whether the post-processor's single-sequence template begins (front) or ends with a special
// token, and the first special token's text.
struct TemplateInfo {
  bool adds_front = false;
  bool adds_back = false;
  std::string front_text;
};

TemplateInfo ReadTemplate(const Json& root) {
  TemplateInfo info;
  const Json* post = FindField(root, "post_processor");
  if (post == nullptr || TypeOf(*post) != "TemplateProcessing") return info;
  const Json* single = FindField(*post, "single");
  if (single == nullptr || !single->is_array() || single->empty()) return info;
  const auto special_text = [](const Json& piece) -> const Json* {
    const Json* special = FindField(piece, "SpecialToken");
    return special != nullptr ? FindField(*special, "id") : nullptr;
  };
  if (const Json* t = special_text(single->front()); t != nullptr && t->is_string()) {
    info.adds_front = true;
    info.front_text = t->get<std::string>();
  }
  info.adds_back = single->size() > 1 && special_text(single->back()) != nullptr;
  return info;
}

}  // namespace

Vocab VocabFromTokenizerJson(std::string_view tokenizer_json,
                             std::string_view tokenizer_config_json, const std::string& source) {
  const Json root = Parse(tokenizer_json, source);
  const Json config = tokenizer_config_json.empty()
                          ? Json::object()
                          : Parse(tokenizer_config_json, source + " (tokenizer_config.json)");
  const Json* model = FindField(root, "model");
  if (model == nullptr) FailField(ErrorKind::kCorrupt, source, "model", "missing");
  CheckModel(*model, source);
  CheckNormalizer(root, source);
  CheckPreTokenizer(root, source);

  // id -> (text, type); added tokens override the model vocabulary, as in HF.
  std::map<int32_t, std::pair<std::string, TokenType>> entries;
  for (const auto& [text, id_value] : model->at("vocab").items()) {
    const int32_t id = ParseId(id_value, source, "model.vocab['" + text + "']");
    entries[id] = {text, IsByteTokenText(text) ? TokenType::kByte : TokenType::kNormal};
  }
  std::string unk_text;
  if (const Json* unk = FindField(*model, "unk_token"); unk != nullptr && unk->is_string()) {
    unk_text = unk->get<std::string>();
  }
  size_t unsupported_flags = 0;
  if (const Json* added = FindField(root, "added_tokens"); added != nullptr) {
    if (!added->is_array()) FailField(ErrorKind::kCorrupt, source, "added_tokens", "not an array");
    for (size_t i = 0; i < added->size(); ++i) {
      const Json& token = (*added)[i];
      const std::string field = "added_tokens[" + std::to_string(i) + "]";
      const Json* id_value = FindField(token, "id");
      const Json* content = FindField(token, "content");
      if (id_value == nullptr || content == nullptr || !content->is_string()) {
        FailField(ErrorKind::kCorrupt, source, field, "needs an integer id and a string content");
      }
      const int32_t id = ParseId(*id_value, source, field + ".id");
      const std::string text = content->get<std::string>();
      const Json* special = FindField(token, "special");
      TokenType type =
          special != nullptr && *special == true ? TokenType::kControl : TokenType::kUserDefined;
      if (type == TokenType::kControl && text == unk_text) type = TokenType::kUnknown;
      for (const char* flag : {"lstrip", "rstrip", "single_word"}) {
        const Json* v = FindField(token, flag);
        if (v != nullptr && *v == true) ++unsupported_flags;
      }
      const auto it = entries.find(id);
      if (it != entries.end() && it->second.first != text) {
        LogWarn(source + ": " + field + " '" + text + "' replaces '" + it->second.first +
                "' as token " + std::to_string(id));
      }
      entries[id] = {text, type};
    }
  }
  if (unsupported_flags != 0) {
    LogWarn(source + ": " + std::to_string(unsupported_flags) +
            " lstrip/rstrip/single_word flags of added tokens are ignored");
  }
  for (auto& [id, entry] : entries) {
    for (const std::string_view markup : kRenderedMarkup) {
      if (entry.first == markup) entry.second = TokenType::kUserDefined;
    }
  }

  Vocab vocab;
  vocab.source = source;
  const size_t n = entries.empty() ? 0 : static_cast<size_t>(entries.rbegin()->first) + 1;
  if (n > entries.size() + kMaxIdGap) {
    FailField(ErrorKind::kCorrupt, source, "model.vocab",
              "token id " + std::to_string(n - 1) + " leaves more than " +
                  std::to_string(kMaxIdGap) + " ids unassigned");
  }
  vocab.tokens.resize(n);
  vocab.types.assign(n, TokenType::kUnused);
  vocab.scores.assign(n, kPlaceholderScore);
  for (size_t id = 0; id < n; ++id) vocab.tokens[id] = "[PAD" + std::to_string(id) + "]";
  for (auto& [id, entry] : entries) {
    vocab.tokens[id] = std::move(entry.first);
    vocab.types[id] = entry.second;
  }

  const Json& merges = model->at("merges");
  vocab.merges.reserve(merges.size());
  size_t dropped = 0;
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json& merge = merges[i];
    if (merge.is_string()) {
      vocab.merges.push_back(merge.get<std::string>());
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string()) {
      const std::string left = merge[0].get<std::string>();
      const std::string right = merge[1].get<std::string>();
      if (left.empty() || right.empty() || left.find(' ') != std::string::npos ||
          right.find(' ') != std::string::npos) {
        ++dropped;
        continue;
      }
      vocab.merges.push_back(left + " " + right);
    } else {
      FailField(ErrorKind::kCorrupt, source, "model.merges[" + std::to_string(i) + "]",
                "not a string or a pair of strings");
    }
  }
  if (dropped != 0) {
    LogWarn(source + ": " + std::to_string(dropped) +
            " merges with a space or nothing in a half can never apply; dropped");
  }

  const auto id_of = [&](const std::string& text) {
    for (size_t id = 0; id < n; ++id) {
      if (vocab.tokens[id] == text) return static_cast<int32_t>(id);
    }
    return kNoToken;
  };
  const TemplateInfo tmpl = ReadTemplate(root);
  vocab.bos_id = id_of(ConfigTokenText(config, "bos_token")
                           .value_or(tmpl.adds_front ? tmpl.front_text : std::string("<bos>")));
  vocab.eos_id = id_of(ConfigTokenText(config, "eos_token").value_or("<eos>"));
  vocab.pad_id = id_of(ConfigTokenText(config, "pad_token").value_or("<pad>"));
  vocab.unk_id = id_of(ConfigTokenText(config, "unk_token").value_or(unk_text));
  vocab.mask_id = id_of(ConfigTokenText(config, "mask_token").value_or("<mask>"));
  const Json* add_bos = FindField(config, "add_bos_token");
  const Json* add_eos = FindField(config, "add_eos_token");
  vocab.add_bos =
      add_bos != nullptr && add_bos->is_boolean() ? add_bos->get<bool>() : tmpl.adds_front;
  vocab.add_eos =
      add_eos != nullptr && add_eos->is_boolean() ? add_eos->get<bool>() : tmpl.adds_back;
  ValidateVocab(vocab);
  return vocab;
}

Vocab LoadVocabFromTokenizerJson(const std::string& path) {
  const auto read = [](const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) Fail(ErrorKind::kIo, file + ": cannot open for reading");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) Fail(ErrorKind::kIo, file + ": read failed");
    return text.str();
  };
  const std::string json = read(path);
  const std::filesystem::path config_path =
      std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  std::error_code ec;
  const std::string config =
      std::filesystem::exists(config_path, ec) ? read(config_path.string()) : std::string();
  return VocabFromTokenizerJson(json, config, path);
}

}  // namespace tandem
