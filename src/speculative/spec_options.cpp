#include "speculative/spec_options.h"

#include <string>

#include "base/error.h"
#include "speculative/draft_tree.h"

namespace tandem {

void ValidateNgramLengths(int min, int max, std::string_view what) {
  if (min < 1 || min > max || max > kMaxNgramLength) {
    Fail(ErrorKind::kInvalidArgument,
         std::string(what) + " must satisfy 1 <= min <= max <= " + std::to_string(kMaxNgramLength) +
             " (got " + std::to_string(min) + ", " + std::to_string(max) + ")");
  }
}

void ValidateSpecOptions(const SpecOptions& spec) {
  if (UsesNgram(spec.type)) ValidateNgramLengths(spec.ngram_min, spec.ngram_max, "n-gram lengths");
  if (spec.draft_max < 0 || spec.draft_min < 0 || spec.draft_min > spec.draft_max ||
      spec.draft_max > kMaxDraftTokens) {
    Fail(ErrorKind::kInvalidArgument, "draft lengths must satisfy 0 <= draft-min <= draft-max <= " +
                                          std::to_string(kMaxDraftTokens) + " (got " +
                                          std::to_string(spec.draft_min) + ", " +
                                          std::to_string(spec.draft_max) + ")");
  }
  if (!(spec.draft_p_min >= 0.0f && spec.draft_p_min <= 1.0f)) {
    Fail(ErrorKind::kInvalidArgument, "draft-p-min must be in [0, 1]");
  }
  if (spec.tree_width != 0 && (spec.tree_width < 2 || spec.tree_width > kMaxTreeWidth)) {
    Fail(ErrorKind::kInvalidArgument, "draft-tree must be 0 (chains) or in [2, " +
                                          std::to_string(kMaxTreeWidth) + "] (got " +
                                          std::to_string(spec.tree_width) + ")");
  }
}

}  // namespace tandem
