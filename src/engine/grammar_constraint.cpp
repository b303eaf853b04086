#include "engine/grammar_constraint.h"

#include "base/error.h"
#include "tokenizer/chat_format.h"

namespace tandem {

GrammarConstraint MakeGrammarConstraint(std::shared_ptr<CompiledGrammar> grammar,
                                        const Tokenizer& tokenizer, bool thinking,
                                        int thought_budget) {
  GrammarConstraint c;
  c.grammar = std::move(grammar);
  if (!thinking || (!c.grammar && thought_budget < 0)) return c;
  c.thought_open = tokenizer.FindToken(chat_marker::kChannelOpen);
  c.thought_close = tokenizer.FindToken(chat_marker::kChannelClose);
  if (c.thought_open < 0 || c.thought_close < 0) {
    if (thought_budget >= 0) {
      Fail(ErrorKind::kInvalidArgument,
           "a thinking budget is set, but this model's vocabulary has no thought channel tokens");
    }
    c.thought_open = c.thought_close = -1;
  }
  c.thought_budget = thought_budget;
  return c;
}

}  // namespace tandem
