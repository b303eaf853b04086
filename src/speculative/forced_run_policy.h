// Whether a drafter's draft goes on through a grammar-forced run it reaches or stops there
// (issue 16; docs/mtp.md § Constrained drafting), from what this request measured.
//
// A forced run needs no drafter: stopped at it, the slot appends it for free and the drafter
// pays no step for it, but the drafts after it wait for the next round (one more target
// forward). Going on costs one drafter step per forced token (the assistant's next step needs
// each position's hidden) and buys the drafts after the run in this round. So a run of m tokens
// is drafted through when m * step < acceptance * forward: `step` the measured drafter step,
// `forward` the measured target forward, `acceptance` the measured rate at which verification
// accepted the drafter's tokens it reached (prior 0.5 before any). A drafter that is rarely right
// (acceptance near 0) stops at every run; one that is cheap and right goes through short runs.
#pragma once

#include <algorithm>
#include <cmath>

#include "speculative/spec_options.h"

namespace tandem {

class ForcedRunPolicy {
 public:
  // The longest forced run a draft goes on through this round (0: stop at every run).
  int Limit() const {
    const double step = step_ms_ > 0 ? step_ms_ : 0.1 * std::max(forward_ms_, 1e-3);
    const double forward = forward_ms_ > 0 ? forward_ms_ : 10 * step;
    const double acceptance = (accepted_ + kPrior) / (reached_ + 1.0);
    return static_cast<int>(
        std::min<double>(kMaxDraftTokens, std::floor(acceptance * forward / step)));
  }
  void RecordDraft(int steps, double ms) {
    if (steps > 0) Ema(step_ms_, ms / steps);
  }
  void RecordForward(double ms) { Ema(forward_ms_, ms); }
  // A round whose drafter tokens verification reached `reached` of and accepted `accepted` of.
  void RecordRound(int reached, int accepted) {
    accepted_ = accepted_ * kDecay + accepted;
    reached_ = reached_ * kDecay + reached;
  }

 private:
  static constexpr double kPrior = 0.5, kDecay = 0.97, kEma = 0.2;
  static void Ema(double& v, double x) { v = v == 0 ? x : v + kEma * (x - v); }
  double step_ms_ = 0, forward_ms_ = 0;
  double accepted_ = 0, reached_ = 0;
};

}  // namespace tandem
