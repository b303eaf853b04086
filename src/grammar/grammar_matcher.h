// Follows one generation through a compiled grammar, token by token: which tokens may come next,
// whether the document is complete, which bytes are forced, and checkpoints to roll back to
// (speculative drafts that were not accepted).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/compiled_grammar.h"

namespace tandem {

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<CompiledGrammar> grammar);

  // Advances by token `id` if the grammar allows it (a stop token only when complete; it ends
  // the match). Returns false and changes nothing otherwise.
  bool AcceptToken(int32_t id);
  // Advances by raw bytes; false (and unchanged) if they leave the grammar.
  bool AcceptBytes(std::string_view bytes);
  // Whether `id` would be accepted, without advancing.
  bool CanAcceptToken(int32_t id);

  // The tokens allowed next (see CompiledGrammar::FillMask); none once terminated.
  void FillNextTokenMask(TokenBitmask& mask);

  bool IsComplete() const;
  bool IsTerminated() const { return terminated(); }
  // The bytes every continuation starts with (stops where there is a choice or the grammar may
  // end), at most `max_bytes`.
  std::string ForcedBytes(size_t max_bytes = 256);

  // A position to roll back to; Rollback(c) undoes everything accepted since Checkpoint() == c.
  size_t Checkpoint() const { return states_.size(); }
  void Rollback(size_t checkpoint);

  int32_t state() const { return states_.back(); }  // a Pushdown state id
  const CompiledGrammar& compiled() const { return *grammar_; }

 private:
  bool terminated() const { return terminated_at_ != 0 && terminated_at_ <= states_.size(); }
  // The states after each of `bytes` from the current one into `out`; false if it dies.
  bool Advance(std::string_view bytes, std::vector<int32_t>& out);

  std::shared_ptr<CompiledGrammar> grammar_;
  std::vector<int32_t> states_;  // one per accepted byte (plus the initial state)
  size_t terminated_at_ = 0;     // states_.size() right after a stop token, or 0
  std::vector<int32_t> scratch_;
};

}  // namespace tandem
