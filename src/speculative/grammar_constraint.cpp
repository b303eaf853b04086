#include "speculative/grammar_constraint.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "grammar/compiled_grammar.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/tokenizer.h"

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

void ValidateGrammarConstraint(const GrammarConstraint& g, const std::vector<int32_t>& eog_tokens,
                               int n_vocab) {
  if (g.grammar) {
    for (const int32_t id : g.grammar->vocab().stop_ids()) {
      if (std::find(eog_tokens.begin(), eog_tokens.end(), id) == eog_tokens.end()) {
        Fail(ErrorKind::kInvalidArgument, "grammar: its stop token " + std::to_string(id) +
                                              " is not an end-of-generation token");
      }
    }
  }
  if (g.thought_budget >= 0 && (g.thought_open < 0 || g.thought_open >= n_vocab ||
                                g.thought_close < 0 || g.thought_close >= n_vocab)) {
    Fail(ErrorKind::kInvalidArgument,
         "a thinking budget needs the thought channel's tokens, which this vocabulary lacks");
  }
}

}  // namespace tandem
