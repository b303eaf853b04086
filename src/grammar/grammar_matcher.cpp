#include "grammar/grammar_matcher.h"

#include "base/error.h"

namespace tandem {

GrammarMatcher::GrammarMatcher(std::shared_ptr<CompiledGrammar> grammar)
    : grammar_(std::move(grammar)) {
  states_.push_back(grammar_->pushdown().InitialState());
}

bool GrammarMatcher::IsComplete() const {
  return !terminated() && grammar_->pushdown().state(states_.back()).accept;
}

bool GrammarMatcher::Advance(std::string_view bytes, std::vector<int32_t>& out) {
  out.clear();
  Pushdown& pd = grammar_->pushdown();
  int32_t cur = states_.back();
  for (const char c : bytes) {
    cur = pd.Next(cur, static_cast<uint8_t>(c)).next;
    if (cur == Pushdown::kDeadState) return false;
    out.push_back(cur);
  }
  return true;
}

bool GrammarMatcher::AcceptBytes(std::string_view bytes) {
  if (terminated()) return false;
  if (!Advance(bytes, scratch_)) return false;
  states_.insert(states_.end(), scratch_.begin(), scratch_.end());
  return true;
}

bool GrammarMatcher::AcceptToken(int32_t id) {
  const TokenVocabulary& vocab = grammar_->vocab();
  if (id < 0 || id >= vocab.size()) {
    Fail(ErrorKind::kInvalidArgument,
         "grammar: token id " + std::to_string(id) + " is outside the vocabulary");
  }
  if (terminated()) return false;
  if (vocab.IsStop(id)) {
    if (!IsComplete()) return false;
    states_.push_back(Pushdown::kDeadState);
    terminated_at_ = states_.size();
    return true;
  }
  if (!vocab.matchable(id) || vocab.piece(id).empty()) return false;
  return AcceptBytes(vocab.piece(id));
}

bool GrammarMatcher::CanAcceptToken(int32_t id) {
  const TokenVocabulary& vocab = grammar_->vocab();
  if (id < 0 || id >= vocab.size() || terminated()) return false;
  if (vocab.IsStop(id)) return IsComplete();
  if (!vocab.matchable(id) || vocab.piece(id).empty()) return false;
  return Advance(vocab.piece(id), scratch_);
}

void GrammarMatcher::FillNextTokenMask(TokenBitmask& mask) {
  if (terminated()) {
    mask.Clear();
    return;
  }
  grammar_->FillMask(states_.back(), mask);
}

std::string GrammarMatcher::ForcedBytes(size_t max_bytes) {
  std::string forced;
  if (terminated()) return forced;
  Pushdown& pd = grammar_->pushdown();
  const Grammar& g = grammar_->grammar();
  int32_t cur = states_.back();
  while (forced.size() < max_bytes && !pd.state(cur).accept && !pd.state(cur).tops.empty()) {
    ByteSet all;
    for (const int32_t top : pd.state(cur).tops) {
      const ByteSet& set = g.bytesets[g.elements[pd.node(top).pos].value];
      for (size_t w = 0; w < all.bits.size(); ++w) all.bits[w] |= set.bits[w];
    }
    if (all.Count() != 1) break;
    int b = 0;
    while (!all.Has(static_cast<uint8_t>(b))) ++b;
    cur = pd.Next(cur, static_cast<uint8_t>(b)).next;
    forced.push_back(static_cast<char>(b));
  }
  return forced;
}

void GrammarMatcher::Rollback(size_t checkpoint) {
  if (checkpoint == 0 || checkpoint > states_.size()) {
    Fail(ErrorKind::kInvalidArgument, "grammar: rollback to a checkpoint that does not exist");
  }
  states_.resize(checkpoint);
  if (terminated_at_ > checkpoint) terminated_at_ = 0;
}

}  // namespace tandem
