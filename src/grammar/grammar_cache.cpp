#include "grammar/grammar_cache.h"

#include "grammar/gbnf_parser.h"
#include "grammar/tool_call_grammar.h"

namespace tandem {

GrammarCache::GrammarCache(const Tokenizer& tokenizer, size_t capacity)
    : tokenizer_(tokenizer),
      capacity_(capacity),
      vocab_(TokenVocabulary::FromTokenizer(tokenizer)) {}

std::shared_ptr<CompiledGrammar> GrammarCache::Compile(const ConstraintSource& source) {
  const bool tool_calls = source.kind == ConstraintSource::Kind::kToolCalls;
  std::string key = ConstraintKey(source);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it);
        return it->second;
      }
    }
    if (tool_calls && !tool_vocab_) {
      tool_vocab_ = TokenVocabulary::FromTokenizer(tokenizer_, kToolCallMarkup);
    }
  }
  // Compiled outside the lock: another request's lookup need not wait for it.
  auto grammar = std::make_shared<CompiledGrammar>(ParseGbnf(ConstraintGbnf(source)),
                                                   tool_calls ? tool_vocab_ : vocab_);
  grammar->SetEncoder([tokenizer = &tokenizer_](std::string_view text) {
    return tokenizer->Encode(text, {.add_special = false, .parse_special = false});
  });
  std::lock_guard<std::mutex> lock(mu_);
  entries_.emplace_front(std::move(key), grammar);
  if (entries_.size() > capacity_) entries_.pop_back();
  return grammar;
}

}  // namespace tandem
