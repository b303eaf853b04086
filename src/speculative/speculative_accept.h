// Lossless speculative sampling (Leviathan et al. / Chen et al.): accept a drafted token with
// probability min(1, p(x) / q(x)), otherwise resample from normalise(max(0, p - q)).
// If every draft token of a round is accepted, the caller draws the bonus token from the
// target's next distribution with SampleFrom(). The emitted tokens are then distributed
// exactly as samples from p, whatever q is.
#pragma once

#include <cstdint>
#include <span>

#include "sampling/rng.h"

namespace tandem {

struct SpeculativeOutcome {
  bool accepted = false;  // true: `token` is the draft token
  int32_t token = 0;      // the token to emit at this position
};

// p[V]: the target's distribution at the position (Sampler::Distribution with the history up
// to it, draft tokens included); q[V]: the drafter's distribution that `draft_token` was drawn
// from. Both normalised; an empty q is a point mass at `draft_token` (a deterministic drafter,
// e.g. prompt lookup: no V-sized one-hot needed). Uses one uniform u: accept iff u * q(x) < p(x)
// (so a draft with q(x) = 0 is accepted iff p(x) > 0); on rejection uses one more uniform to draw
// from the residual (see ResidualDistribution), written into `residual` [V] as working memory.
// Greedy target (p one-hot): accepted iff the draft is p's token, else that token.
// Throws Error(kInvalidArgument) on size mismatches or a draft token outside [0, V).
SpeculativeOutcome SpeculativeAccept(std::span<const float> p, std::span<const float> q,
                                     int32_t draft_token, Rng& rng, std::span<float> residual);

// residual[V] = max(0, p - q) / sum(max(0, p - q)), summed in id order. If that sum is zero
// (p == q up to rounding, so a rejection was a rounding artefact) residual = p instead.
// Throws Error(kInvalidArgument) when the three sizes differ.
void ResidualDistribution(std::span<const float> p, std::span<const float> q,
                          std::span<float> residual);

}  // namespace tandem
