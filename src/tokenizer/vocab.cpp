// The tokenizer's vocabulary as plain data: token texts, types, merge ranks and special ids.
#include "tokenizer/vocab.h"

#include "base/error.h"

namespace tandem {

std::string TokenTypeName(TokenType type) {
  switch (type) {
    case TokenType::kUndefined:
      return "undefined";
    case TokenType::kNormal:
      return "normal";
    case TokenType::kUnknown:
      return "unknown";
    case TokenType::kControl:
      return "control";
    case TokenType::kUserDefined:
      return "user_defined";
    case TokenType::kUnused:
      return "unused";
    case TokenType::kByte:
      return "byte";
  }
  return "type#" + std::to_string(static_cast<int32_t>(type));
}

void ValidateVocab(const Vocab& vocab) {
  const std::string& src = vocab.source;
  const size_t n = vocab.tokens.size();
  if (n == 0) Fail(ErrorKind::kCorrupt, src + ": the vocabulary has no tokens");
  if (n > static_cast<size_t>(INT32_MAX)) {
    Fail(ErrorKind::kCorrupt, src + ": " + std::to_string(n) + " tokens do not fit in int32 ids");
  }
  if (vocab.types.size() != n) {
    Fail(ErrorKind::kCorrupt, src + ": " + std::to_string(n) + " tokens but " +
                                  std::to_string(vocab.types.size()) + " token types");
  }
  if (!vocab.scores.empty() && vocab.scores.size() != n) {
    Fail(ErrorKind::kCorrupt, src + ": " + std::to_string(n) + " tokens but " +
                                  std::to_string(vocab.scores.size()) + " scores");
  }
  for (size_t id = 0; id < n; ++id) {
    const auto t = static_cast<int32_t>(vocab.types[id]);
    if (t < 0 || t >= kTokenTypeLimit) {
      Fail(ErrorKind::kCorrupt,
           src + ": token " + std::to_string(id) + " has unknown type " + std::to_string(t));
    }
  }
  const std::pair<const char*, int32_t> specials[] = {
      {"bos", vocab.bos_id}, {"eos", vocab.eos_id}, {"eot", vocab.eot_id},   {"eom", vocab.eom_id},
      {"unk", vocab.unk_id}, {"pad", vocab.pad_id}, {"mask", vocab.mask_id},
  };
  for (const auto& [name, id] : specials) {
    if (id != kNoToken && (id < 0 || static_cast<size_t>(id) >= n)) {
      Fail(ErrorKind::kCorrupt, src + ": " + name + " token id " + std::to_string(id) +
                                    " is outside the vocabulary of " + std::to_string(n));
    }
  }
}

bool SplitMerge(std::string_view merge, std::string_view* left, std::string_view* right) {
  if (merge.size() < 2) return false;
  const size_t space = merge.find(' ', 1);
  if (space == std::string_view::npos) return false;
  *left = merge.substr(0, space);
  *right = merge.substr(space + 1);
  return true;
}

}  // namespace tandem
