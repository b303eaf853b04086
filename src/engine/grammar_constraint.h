// A compiled grammar as a request's constraint: with thinking on, the thought channel's markers
// (`<|channel>` / `<channel|>`) from the tokenizer, so that thinking stays unconstrained and the
// grammar starts with the answer.
#pragma once

#include <memory>

#include "engine/request.h"
#include "grammar/compiled_grammar.h"
#include "tokenizer/tokenizer.h"

namespace tandem {

// Without the two markers in the vocabulary, the whole output is constrained.
GrammarConstraint MakeGrammarConstraint(std::shared_ptr<CompiledGrammar> grammar,
                                        const Tokenizer& tokenizer, bool thinking);

}  // namespace tandem
