#include "model/vocabulary_check.h"

#include "base/error.h"
#include "gguf/gguf_reader.h"

namespace tandem {

void CheckSameVocabulary(const GgufFile& draft, int draft_n_vocab, const GgufFile& target,
                         int target_n_vocab, const std::string& what) {
  const std::string prefix = draft.path() + ": " + what + " does not fit the target: ";
  if (draft_n_vocab != target_n_vocab) {
    Fail(ErrorKind::kInvalidArgument, prefix + "vocabulary of " + std::to_string(draft_n_vocab) +
                                          " tokens, target has " + std::to_string(target_n_vocab));
  }
  constexpr const char* kTokens = "tokenizer.ggml.tokens";
  if (!draft.HasKey(kTokens) || !target.HasKey(kTokens)) return;
  const auto mine = draft.GetStringArray(kTokens);
  const auto theirs = target.GetStringArray(kTokens);
  for (size_t i = 0; i < mine.size() && i < theirs.size(); ++i) {
    if (mine[i] != theirs[i]) {
      Fail(ErrorKind::kInvalidArgument, prefix + "token " + std::to_string(i) + " is '" +
                                            std::string(mine[i]) + "' here but '" +
                                            std::string(theirs[i]) + "' in the target");
    }
  }
}

}  // namespace tandem
