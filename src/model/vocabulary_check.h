// Drafts are only meaningful when drafter and target speak the same vocabulary.
#pragma once

#include <string>

namespace tandem {

class GgufFile;

// Throws Error(kInvalidArgument) naming `draft`'s path and the first token whose text differs
// from `target`'s (both files' tokenizer.ggml.tokens, when both have one), or the two sizes.
void CheckSameVocabulary(const GgufFile& draft, int draft_n_vocab, const GgufFile& target,
                         int target_n_vocab, const std::string& what);

}  // namespace tandem
