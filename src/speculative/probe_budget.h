// When speculation does not pay by the current estimates, a controller still drafts now and then
// (a probe) so the estimates can recover when the text becomes predictable. ProbeBudget bounds
// what probing costs: the rounds that do not draft bank a share of their time (Accrue), and a
// probe is taken only when the bank covers its estimated excess cost over not drafting and
// enough rounds have passed since the last one (an interval doubled after each miss Observe is
// told of). So at zero acceptance probes cost at most kShare of the time, whatever the machine's
// draft and verify costs. Used by DraftLengthController (a draft versus a plain step) and
// DraftPlanner (a model extension versus the lookup proposal alone).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tandem {

class ProbeBudget {
 public:
  static constexpr double kShare = 0.01;   // of each non-drafting round's time, banked for probes
  static constexpr int kMinInterval = 8;   // rounds between probes: at least this, ...
  static constexpr int kMaxInterval = 64;  // ... doubled after each observed miss up to this

  // A round that could probe: true (a probe is taken, its cost paid from the bank) when the
  // interval has passed and the bank holds `excess_ms`; else banks kShare of `round_ms`, up to
  // a few probes' worth (a long stretch does not pay for a burst).
  bool Take(double excess_ms, double round_ms) {
    if (++streak_ >= interval_ && bank_ms_ >= excess_ms) {
      streak_ = 0;
      bank_ms_ -= excess_ms;
      ++probes_;
      return true;
    }
    bank_ms_ = std::min(bank_ms_ + share_ * round_ms, 4.0 * excess_ms);
    return false;
  }
  // The share of a round's time banked: kShare, divided among the slots of a batch when every
  // slot's probe holds up the whole batch (each slot banks from the same steps).
  void SetShare(double share) { share_ = share; }
  // A round that drafted because drafting paid: the streak restarts.
  void Reset() { streak_ = 0; }
  // The outcome of a drafting round: a hit keeps probes frequent, a miss spaces them out.
  // DraftLengthController reports its probes' outcomes and any round's hit (an ordinary round's
  // miss says drafting stopped paying, not that probing is futile); DraftPlanner every
  // extension of a fully accepted proposal.
  void Observe(bool hit) { interval_ = hit ? kMinInterval : std::min(kMaxInterval, 2 * interval_); }
  int64_t probes() const { return probes_; }
  // The count of probes starts again (a new request reports its own); the bank and the interval
  // are kept.
  void ClearCount() { probes_ = 0; }

 private:
  double bank_ms_ = 0;
  double share_ = kShare;
  int streak_ = 0;
  int interval_ = kMinInterval;
  int64_t probes_ = 0;
};

}  // namespace tandem
