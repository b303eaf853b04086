// A request's grammar constraint inside the speculative round (issue 16): the grammar state of
// the committed tokens, the mask applied to the target's logits at every verified position, the
// drafts' constraint (masked drafting, rolled back afterwards), the cut at the first draft the
// grammar rejects, the forced tokens the grammar alone determines (drafted for free), and where
// it leaves a choice, the request's layout habit (LayoutGuesses: drafted for free, verified).
//
// Thinking stays unconstrained: with a thought channel (`thought_open` >= 0), the first token may
// also open it; inside it nothing is masked, and the grammar starts after `thought_close`.
// The thought budget is one more rule of the same constraint: once `thought_budget` tokens were
// generated inside the channel, only `thought_close` is allowed (a point mass at verification,
// drafts beyond it cut, the close drafted for free as a forced token). Without a grammar the
// answer is unconstrained and may open the channel again (the budget counts all channels).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "grammar/grammar_matcher.h"
#include "speculative/draft_constraint.h"
#include "speculative/drafter.h"
#include "speculative/grammar_constraint.h"
#include "speculative/layout_guesses.h"

namespace tandem {

class SlotGrammar final : public DraftConstraint {
 public:
  SlotGrammar(const GrammarConstraint& constraint, int n_vocab);

  // Masked copy of `logits` [n_vocab] for the committed state (the same pointer when the state
  // is unconstrained, i.e. thinking). Valid until the next call.
  const float* Mask(const float* logits);
  // The committed state advances over an emitted token; throws Error(kInternal) if the grammar
  // rejects it (masking makes that impossible).
  void Commit(int32_t token);

  // Drafting: Begin() before the drafter runs (the drafter then calls MaskLogits / Advance),
  // End() after it, which rolls back to the committed state.
  void BeginDraft();
  void EndDraft();
  bool MaskLogits(float* logits, int n_vocab) override;
  void Advance(int32_t token) override;
  // The forced token of the current state (see ForcedTokens), or -1.
  int32_t ForcedNext() override;
  bool AllowedTokens(int max, std::vector<int32_t>& ids) override;
  // The forced run from the current state (tokens ForcedTokens gives one after another), counted
  // up to `max`; the state is left as it was.
  int ForcedRun(int max) override;

  // Keeps the longest prefix of drafts.tokens the grammar accepts from the committed state.
  void CutDrafts(DraftResult& drafts);
  // Appends to `drafts` (already valid, see CutDrafts) the tokens the grammar forces after them
  // (see ForcedTokens) and, where it leaves a choice, the layout guess (LayoutGuesses) while
  // there is one and it pays (LayoutGuesses::Pays; `row_cost(rows)`: what the rows-th verified
  // row costs, as a share of a one-row forward), while drafts.size() < n_max; `sampled`: each
  // gets an empty q (a point mass). Returns how many; `guessed`[i]: whether the i-th of them is
  // a guess (else forced).
  int AppendForced(DraftResult& drafts, int n_max, bool sampled,
                   const std::function<double(int rows)>& row_cost, std::vector<bool>& guessed);
  // After verification: of the last drafts' guesses it reached `reached`, accepted `accepted`.
  void RecordGuesses(int reached, int accepted) { layout_.RecordOutcome(reached, accepted); }

 private:
  enum class Phase { kStart, kThinking, kAnswer, kDone };
  // Inside the thought channel with its budget spent: only thought_close is allowed.
  bool ThoughtExhausted() const;
  // mask_ := the tokens allowed next in the answer or start phase (with the matcher): the
  // grammar's, the thought channel's open token at the start, the canonical restriction.
  void FillAllowed();
  // Advances `phase_`/matcher over `token`; false if the grammar rejects it.
  bool Step(int32_t token);
  // The canonical restriction (docs/mtp.md § Constrained drafting): in the answer, while the
  // grammar's pending continuation is a forced string whose tokenizer encoding (the grammar's
  // encoder) has >= 2 tokens, the only token allowed is the first of that encoding; its last
  // token, which may merge with the free text after, is never required. -1: no restriction
  // (no encoder, nothing forced, one token, or a first token the grammar's mask does not
  // allow). Needs mask_ filled for the current state; memoized per matcher state.
  int32_t CanonicalForced();
  // The tokens the grammar forces from the current state: the only allowed token, or the
  // canonical next token of a forced string (none without an encoder).
  std::vector<int32_t> ForcedTokens();
  // The LayoutGuesses key of the current state after token `prev` (the answer phase, where the
  // grammar leaves a choice: more than one token allowed, no forced string), or 0. Memoized per
  // matcher state.
  uint64_t ChoiceKey(int32_t prev);
  // The key of a choice (a choices_ value; 0: none) after token `prev` (by its last byte), or 0.
  uint64_t KeyAfter(uint64_t choice, int32_t prev) const;
  // choices_'s entry for the current state, made from mask_ (filled for it) if missing.
  std::unordered_map<int32_t, uint64_t>::iterator RememberChoice();
  void Save();
  void Restore();

  GrammarConstraint constraint_;
  int n_vocab_;
  std::unique_ptr<GrammarMatcher> matcher_;  // null: no grammar (thought budget only)
  Phase phase_;
  int thought_tokens_ = 0;                         // generated inside the thought channel
  static constexpr size_t kForcedBytes = 64;       // forced bytes encoded at most
  static constexpr size_t kCanonicalCache = 4096;  // memo entries before it is cleared
  TokenBitmask mask_;
  std::vector<float> masked_;
  std::unordered_map<int32_t, int32_t> canonical_;  // matcher state -> CanonicalForced()
  std::unordered_map<int32_t, uint64_t> choices_;   // matcher state -> mask hash, 0: no choice
  LayoutGuesses layout_;
  int32_t last_token_ = -1;  // the last committed token
  // Saved committed state while drafting.
  Phase saved_phase_ = Phase::kStart;
  size_t saved_checkpoint_ = 0;
  int saved_thought_tokens_ = 0;
};

}  // namespace tandem
