#include "engine/grammar_constraint.h"

#include "tokenizer/chat_format.h"

namespace tandem {

GrammarConstraint MakeGrammarConstraint(std::shared_ptr<CompiledGrammar> grammar,
                                        const Tokenizer& tokenizer, bool thinking) {
  GrammarConstraint c;
  c.grammar = std::move(grammar);
  if (thinking && c.grammar) {
    c.thought_open = tokenizer.FindToken(chat_marker::kChannelOpen);
    c.thought_close = tokenizer.FindToken(chat_marker::kChannelClose);
    if (c.thought_open < 0 || c.thought_close < 0) c.thought_open = c.thought_close = -1;
  }
  return c;
}

}  // namespace tandem
