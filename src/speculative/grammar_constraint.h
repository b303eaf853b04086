// A request's constraint on what it generates: a compiled grammar and a thinking budget, and how a
// request gets one. With thinking on, the thought channel's markers (`<|channel>` /
// `<channel|>`) come from the tokenizer, so that thinking stays unconstrained and the grammar
// starts with the answer. Inside the speculative round it is SlotGrammar (slot_grammar.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace tandem {

class CompiledGrammar;
class Tokenizer;

// Constrained decoding (a grammar compiled against the target's vocabulary; its stop ids should
// be among eog_tokens). With thought_open >= 0 the model may first think in a channel opened by
// that token and closed by thought_close, unconstrained; the grammar starts with the answer.
// thought_budget >= 0 (needs the channel's ids) closes the channel: once that many tokens were
// generated inside it (all channels of the answer together), the next token is thought_close.
struct GrammarConstraint {
  std::shared_ptr<CompiledGrammar> grammar;  // null: unconstrained (but the thought budget)
  int32_t thought_open = -1, thought_close = -1;
  int thought_budget = -1;  // -1: unlimited
  bool active() const { return grammar != nullptr || thought_budget >= 0; }
};

// `grammar` may be null (a thought budget alone). With `thinking`, the channel's markers are set
// when there is a grammar (without them in the vocabulary the whole output is constrained) or a
// budget; `thought_budget` >= 0 closes the channel after that many tokens and needs the markers
// (Error(kInvalidArgument) when the vocabulary lacks them). Without `thinking` the budget is
// unused.
GrammarConstraint MakeGrammarConstraint(std::shared_ptr<CompiledGrammar> grammar,
                                        const Tokenizer& tokenizer, bool thinking,
                                        int thought_budget = -1);

// Checks a request's constraint before it runs: throws Error(kInvalidArgument) for a grammar
// whose stop tokens are not all among `eog_tokens`, or a thinking budget without thought tokens
// in [0, n_vocab).
void ValidateGrammarConstraint(const GrammarConstraint& constraint,
                               const std::vector<int32_t>& eog_tokens, int n_vocab);

}  // namespace tandem
