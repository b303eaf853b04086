// Reads and writes a Vocab as the `tokenizer.ggml.*` keys of GGUF metadata.
#include "tokenizer/vocab_gguf.h"

#include <string>

#include "base/error.h"
#include "base/log.h"

namespace tandem {
namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";
constexpr std::string_view kAddBosKey = "tokenizer.ggml.add_bos_token";
constexpr std::string_view kAddEosKey = "tokenizer.ggml.add_eos_token";
constexpr std::string_view kAddSpacePrefixKey = "tokenizer.ggml.add_space_prefix";

struct SpecialIdKey {
  std::string_view key;
  int32_t Vocab::*field;
};
constexpr SpecialIdKey kSpecialIdKeys[] = {
    {"tokenizer.ggml.bos_token_id", &Vocab::bos_id},
    {"tokenizer.ggml.eos_token_id", &Vocab::eos_id},
    {"tokenizer.ggml.eot_token_id", &Vocab::eot_id},
    {"tokenizer.ggml.eom_token_id", &Vocab::eom_id},
    {"tokenizer.ggml.unknown_token_id", &Vocab::unk_id},
    {"tokenizer.ggml.padding_token_id", &Vocab::pad_id},
    {"tokenizer.ggml.mask_token_id", &Vocab::mask_id},
};

std::string Culprit(const GgufMetadata& md, std::string_view key) {
  return md.source() + ": key '" + std::string(key) + "'";
}

}  // namespace

Vocab VocabFromGgufMetadata(const GgufMetadata& md) {
  const std::string model(md.GetString(kModelKey));
  const std::string pre(md.FindString(kPreKey).value_or(""));
  const bool has_merges = md.HasKey(kMergesKey);
  if (model != "gemma4" && !(model == "llama" && pre == "gemma4" && has_merges)) {
    Fail(ErrorKind::kUnsupported,
         Culprit(md, kModelKey) + " is '" + model + "' (pre '" + pre +
             "'); tandem implements the Gemma 4 BPE tokenizer (model 'gemma4', or 'llama' with "
             "pre 'gemma4' and merges)");
  }

  Vocab vocab;
  vocab.source = md.source();
  for (const std::string_view token : md.GetStringArray(kTokensKey)) {
    vocab.tokens.emplace_back(token);
  }
  const size_t n = vocab.tokens.size();

  if (md.HasKey(kTypesKey)) {
    const std::vector<int32_t> types = md.GetI32Array(kTypesKey);
    if (types.size() < n) {
      Fail(ErrorKind::kCorrupt, Culprit(md, kTypesKey) + " has " + std::to_string(types.size()) +
                                    " entries for " + std::to_string(n) + " tokens");
    }
    vocab.types.reserve(n);
    for (size_t id = 0; id < n; ++id) vocab.types.push_back(static_cast<TokenType>(types[id]));
  } else {
    vocab.types.assign(n, TokenType::kNormal);
  }

  if (const GgufValue* scores = md.Find(kScoresKey)) {
    if (scores->is_array() && scores->element_type() == GgufType::kI32) {
      for (const int32_t s : scores->ToVector<int32_t>()) vocab.scores.push_back(float(s));
    } else {
      vocab.scores = md.GetF32Array(kScoresKey);
    }
    if (vocab.scores.size() < n) {
      Fail(ErrorKind::kCorrupt, Culprit(md, kScoresKey) + " has " +
                                    std::to_string(vocab.scores.size()) + " entries for " +
                                    std::to_string(n) + " tokens");
    }
    vocab.scores.resize(n);
  }

  for (const std::string_view merge : md.GetStringArray(kMergesKey)) {
    vocab.merges.emplace_back(merge);
  }

  for (const auto& [key, field] : kSpecialIdKeys) {
    const GgufValue* value = md.Find(key);
    if (value == nullptr) continue;
    const std::optional<uint64_t> id = value->is_array() ? std::nullopt : value->AsNonNegative();
    if (!id) {
      Fail(ErrorKind::kCorrupt,
           Culprit(md, key) + " has type " + value->TypeName() + ", expected a token id");
    }
    if (*id >= n) {
      LogWarn(Culprit(md, key) + ": token id " + std::to_string(*id) +
              " is outside the vocabulary of " + std::to_string(n) + "; ignored");
      continue;
    }
    vocab.*field = static_cast<int32_t>(*id);
  }
  vocab.add_bos = true;  // forced for gemma4, as llama.cpp does
  vocab.add_eos = md.FindBool(kAddEosKey).value_or(false);
  ValidateVocab(vocab);
  return vocab;
}

void AddVocabToGgufMetadata(const Vocab& vocab, GgufMetadata& md) {
  md.Set(kModelKey, GgufValue::String("gemma4"));
  md.Set(kPreKey, GgufValue::String("gemma4"));
  md.Set(kTokensKey, GgufValue::StringArray(std::span<const std::string>(vocab.tokens)));
  if (!vocab.scores.empty()) {
    md.Set(kScoresKey, GgufValue::Array<float>(vocab.scores));
  }
  std::vector<int32_t> types;
  types.reserve(vocab.types.size());
  for (const TokenType t : vocab.types) types.push_back(static_cast<int32_t>(t));
  md.Set(kTypesKey, GgufValue::Array<int32_t>(types));
  md.Set(kMergesKey, GgufValue::StringArray(std::span<const std::string>(vocab.merges)));
  for (const auto& [key, field] : kSpecialIdKeys) {
    const int32_t id = vocab.*field;
    if (id != kNoToken) md.Set(key, GgufValue::U32(static_cast<uint32_t>(id)));
  }
  md.Set(kAddBosKey, GgufValue::Bool(vocab.add_bos));
  md.Set(kAddEosKey, GgufValue::Bool(vocab.add_eos));
  md.Set(kAddSpacePrefixKey, GgufValue::Bool(false));
}

constexpr std::string_view kSuppressKey = "tokenizer.ggml.suppress_tokens";

std::vector<int32_t> SuppressTokensFromGguf(const GgufMetadata& md, int n_vocab) {
  const GgufValue* v = md.Find(kSuppressKey);
  if (v == nullptr) return {};
  if (!v->is_array() || v->element_type() != GgufType::kI32) {
    Fail(ErrorKind::kCorrupt, Culprit(md, kSuppressKey) + " is not an array of int32");
  }
  std::vector<int32_t> ids = v->ToVector<int32_t>();
  for (const int32_t id : ids) {
    if (id < 0 || id >= n_vocab) {
      Fail(ErrorKind::kCorrupt, Culprit(md, kSuppressKey) + ": token id " + std::to_string(id) +
                                    " is outside [0, " + std::to_string(n_vocab) + ")");
    }
  }
  return ids;
}

void AddSuppressTokensToGguf(std::span<const int32_t> ids, GgufWriter& writer) {
  if (!ids.empty()) writer.Set(kSuppressKey, GgufValue::Array<int32_t>(ids));
}

Vocab LoadVocabFromGguf(const GgufFile& file) {
  return VocabFromGgufMetadata(file.metadata());
}

void AddVocabToGguf(const Vocab& vocab, GgufWriter& writer) {
  GgufMetadata keys(vocab.source);
  AddVocabToGgufMetadata(vocab, keys);
  writer.CopyMetadata(keys);
}

}  // namespace tandem
