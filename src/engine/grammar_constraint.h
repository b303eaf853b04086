// A compiled grammar and a thinking budget as a request's constraint: with thinking on, the thought
// channel's markers
// (`<|channel>` / `<channel|>`) from the tokenizer, so that thinking stays unconstrained and the
// grammar starts with the answer.
#pragma once

#include <memory>

#include "engine/request.h"
#include "grammar/compiled_grammar.h"
#include "tokenizer/tokenizer.h"

namespace tandem {

// `grammar` may be null (a thought budget alone). With `thinking`, the channel's markers are set
// when there is a grammar (without them in the vocabulary the whole output is constrained) or a
// budget; `thought_budget` >= 0 closes the channel after that many tokens and needs the markers
// (Error(kInvalidArgument) when the vocabulary lacks them). Without `thinking` the budget is
// unused.
GrammarConstraint MakeGrammarConstraint(std::shared_ptr<CompiledGrammar> grammar,
                                        const Tokenizer& tokenizer, bool thinking,
                                        int thought_budget = -1);

}  // namespace tandem
