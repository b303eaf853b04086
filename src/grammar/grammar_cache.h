// Grammars compiled against one tokenizer's vocabulary, found by their source
// (constraint_source.h): `tandem serve` compiles a request's constraint through it (a repeated
// schema or tool list is compiled once, and found before it is turned into GBNF), `tandem run`
// its --grammar-file / --json-schema. The vocabulary is built once, at construction (the one with
// the tool-call markup tokens matchable at the first tool-call grammar). Thread-safe; the grammars
// it returns are used by one thread at a time (the engine's).
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "grammar/compiled_grammar.h"
#include "grammar/constraint_source.h"
#include "grammar/token_vocabulary.h"
#include "tokenizer/tokenizer.h"

namespace tandem {

class GrammarCache {
 public:
  // `tokenizer` must outlive the cache and every grammar it returns (their encoder uses it).
  explicit GrammarCache(const Tokenizer& tokenizer, size_t capacity = 8);

  // The compiled grammar of `source` (the most recently used `capacity` are kept). A tool-call
  // source's vocabulary has the tool-call markup tokens matchable (tool_call_grammar.h). Throws
  // what ConstraintGbnf and the GBNF parser throw (Error(kInvalidArgument)).
  std::shared_ptr<CompiledGrammar> Compile(const ConstraintSource& source);

 private:
  const Tokenizer& tokenizer_;
  const size_t capacity_;
  const std::shared_ptr<const TokenVocabulary> vocab_;
  std::mutex mu_;
  std::shared_ptr<const TokenVocabulary> tool_vocab_;  // GUARDED_BY(mu_)
  // Most recent first: (ConstraintKey, grammar).
  std::list<std::pair<std::string, std::shared_ptr<CompiledGrammar>>> entries_;  // GUARDED_BY(mu_)
};

}  // namespace tandem
