// A constraint on drafts (a grammar): a drafter that reads logits masks them before each choice
// and reports each chosen token, so that drafts follow the constraint and, for sampled requests,
// q is the masked distribution the draft was drawn from (what lossless verification needs).
// Implemented by a request's grammar in the round (SlotGrammar, slot_grammar.h); ChooseDraftToken
// applies it.
#pragma once

#include <cstdint>
#include <vector>

namespace tandem {

class DraftConstraint {
 public:
  virtual ~DraftConstraint() = default;
  // Sets logits[i] to -inf for every token not allowed next. False when nothing allowed is left
  // with a finite logit (drafting stops: a drafter's head may score only some tokens).
  virtual bool MaskLogits(float* logits, int n_vocab) = 0;
  // Advances over a drafted token (one MaskLogits allowed).
  virtual void Advance(int32_t token) = 0;
  // The one token allowed next (a forced token), or -1 when there is a choice. A drafter takes a
  // forced token without reading its logits (its q is a point mass).
  virtual int32_t ForcedNext() { return -1; }
  // The tokens allowed next, into `ids`, if there are at most `max` of them (a drafter whose head
  // scored none of them scores these instead); false when unconstrained or more are allowed.
  virtual bool AllowedTokens(int max, std::vector<int32_t>& ids) {
    (void)max;
    (void)ids;
    return false;
  }
  // How many tokens are forced from here on, counted up to `max` (0: there is a choice next).
  virtual int ForcedRun(int max) {
    (void)max;
    return 0;
  }
};

}  // namespace tandem
