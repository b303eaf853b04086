// Chooses how many tokens to draft each round (0 = plain decoding) from the acceptance measured
// at each draft position and the measured costs of a draft step and of verifying T rows, so that
// speculation is used only where it pays on this machine.
//
// It never loses by more than a small, fixed share: when drafting does not pay by the current
// estimates it decodes plainly and probes (drafts one token to look for acceptance) only out of
// a budget that plain steps accrue (ProbeBudget: a share of each plain step's measured time),
// each probe paying its estimated excess cost (draft step + verify(2) - verify(1)) from it. So at
// 0 % acceptance the probes cost at most that share of plain decoding, whatever the machine's
// verify cost. While drafting, the plain step is re-measured now and then (costs drift as the load
// changes) and untried lengths one longer than the best are tried.
#pragma once

#include <cstdint>
#include <vector>

#include "speculative/probe_budget.h"

namespace tandem {

class DraftLengthController {
 public:
  // Drafting must promise this much over not drafting: gains inside the timing noise are not
  // gains (DraftPlanner holds a model extension of a lookup proposal to it too).
  static constexpr double kMinGain = 0.02;
  // Each verified row beyond the first is assumed to cost at least this share of a plain step
  // (its activations, attention and logits row), however fast the measured times say: timing
  // noise on a loaded machine must not make verifying look free. Below the row cost of the
  // controller test's "zen4" curve, above that of its ideal memory-bound machine.
  static constexpr double kMinRowCost = 0.03;
  // Each extra verified row's share of a plain step under UseStaticCosts.
  static constexpr double kStaticRowCost = 0.05;
  // A draft step's share of a plain step before one was measured.
  static constexpr double kDefaultDraftStepShare = 0.1;

  // adaptive = false: always draft `draft_max` (capped per round).
  DraftLengthController(int draft_max, bool adaptive);

  // The draft length for the next round, in [0, cap]: the best by the estimates, or a probe, a
  // plain step to re-time it, or one more than the best to explore. Counts a round.
  int Choose(int cap);

  // The length Choose's estimates favour (0: plain decoding) and its tokens per millisecond,
  // changing nothing: for comparing controllers before one of them Chooses.
  struct Estimate {
    int n = 0;
    double rate = 0;
    int limit = 0;  // the longest length looked at (SearchLimit)
  };
  Estimate BestByEstimates(int cap) const;

  // Decide from acceptance and a fixed cost model instead of measured times: a draft step costs
  // `draft_step_cost` target single-row forwards and each extra verified row kStaticRowCost of
  // one. Then the
  // draft lengths, and with them a sampled request's output, depend only on the seed.
  void UseStaticCosts(double draft_step_cost);

  // Draft steps cost nothing (prompt lookup): only verification is paid for. Call before
  // UseStaticCosts, if both.
  void MarkDraftsFree();

  // Starts from `earlier`'s acceptance per position, its plain step and draft step times and
  // its probes' spacing when both were made alike and measure their times (not
  // UseStaticCosts): a slot's next request does not relearn that its drafts are (or are not)
  // accepted and worth their step. Multi-row verify times are not carried: a forward's time is
  // the whole batch's, so one measured beside other slots' long verifies would price this
  // request's rows at theirs (it made an always-right assistant decode plainly at --parallel 4).
  // The count of probes starts from zero. Otherwise a no-op.
  void ContinueFrom(const DraftLengthController& earlier);

  // ProbeBudget::SetShare of its probes.
  void SetProbeShare(double share) { probe_.SetShare(share); }

  // After a round that drafted n tokens of which the first `accepted` were accepted.
  void RecordRound(int n_drafted, int n_accepted);
  // Evidence at one more position of the round just recorded, whose drafts were all accepted:
  // the token the round emitted after them matched a draft proposed there, or not (a lookup
  // proposal longer than the part drafted).
  void RecordNextPosition(int position, bool matched);
  // Measured wall time of `n_steps` draft steps, and of a target forward of `rows` rows.
  void RecordDraftTime(int n_steps, double ms);
  // `borrowed`: the forward verified another kind of round (prompt lookup's controller seeing a
  // round in which the assistant drafted, whose verify costs more: the assistant's steps evict
  // the target's working set). A borrowed time stands in for a row count only until one of its
  // own kind is measured (a multi-row one: then every borrowed time is dropped).
  void RecordVerifyTime(int rows, double ms, bool borrowed = false);

  // Model estimates (for reports and tests).
  double ConditionalAcceptance(int position) const;  // P(accept i | accepted 0..i-1)
  double ExpectedTokens(int n) const;                // tokens emitted by a round drafting n
  double EstimatedRoundMs(int n) const;              // time of a round drafting n
  double DraftStepMs() const;                        // one draft step's estimated time
  // What the `rows`-th verified row adds to a forward, as a share of a one-row forward (by the
  // estimates; kMinRowCost before the plain step was measured).
  double RowCostShare(int rows) const;
  // The expected tokens the `rows`-th verified row must bring to pay for itself in a round
  // drafting n: its cost (RowCostShare of the plain step) at the round's estimated tokens per
  // unit time. Infinite before the plain step was measured. Prices a draft tree's branches.
  double RowPriceTokens(int n, int rows) const;
  int draft_max() const { return draft_max_; }
  // Rounds that drafted although the estimates said plain decoding pays more (probes), and
  // plain steps taken while drafting paid, to re-measure the plain step's cost.
  int64_t probes() const { return probe_.probes(); }
  int64_t remeasures() const { return remeasures_; }

 private:
  // The last kSamples verify times of one row count, each with the plain step's estimate when
  // it was taken (0: none yet). The estimate is their minimum (a stall of a loaded machine only
  // ever adds time), each rescaled to today's plain step: a time taken while the machine was
  // slower (the first, cold forwards; a busier minute) keeps its ratio, not its milliseconds.
  static constexpr int kSamples = 4;
  struct Samples {
    double ms[kSamples] = {}, plain[kSamples] = {};
    int count = 0, next = 0;
    void Add(double value, double plain_ms);
    double Min(double plain_now) const;
  };

  double PlainMs() const;             // the plain step's estimate (0: unmeasured)
  double MeasuredMs(int rows) const;  // Samples::Min of a measured row count
  double VerifyMs(int rows) const;    // from the curve cache
  double ComputeVerifyMs(int rows) const;
  // Measured (a length measured once no dearer than its confirmed neighbours predict), else
  // inter- or extrapolated from the confirmed row counts.
  double EstimatedVerifyMs(int rows) const;
  double NeighbourVerifyMs(int rows, bool confirmed_only) const;
  bool Known(int rows) const;               // measured
  bool Fresh(int rows) const;               // measured within kStaleAfter rounds (or static)
  bool LoneOutlier(int rows) const;         // measured once, over kOutlier x its prediction
  void UpdateSteep();                       // steep_ from the lone outliers
  bool Confirmed(int rows) const;           // Known, the plain step or measured more than once
  double MonotoneVerifyMs(int rows) const;  // max of VerifyMs(1..rows)
  void BuildCurve() const;                  // fills verify_curve_ and monotone_curve_
  void CostsChanged() { verify_curve_.clear(); }
  // The longest draft whose verification was measured (0: none), and how far Choose may look.
  int LongestMeasured() const;
  int SearchLimit(int cap) const;
  double ProbeExcessMs() const;  // what a failing one-token probe costs over plain

  int draft_max_;
  bool adaptive_;
  std::vector<double> accepted_, tried_;  // decayed counts per draft position
  std::vector<Samples> verify_ms_;        // per row count (none = unmeasured), index = rows
  std::vector<int64_t> measured_at_;      // round_ of each row count's latest measurement
  int64_t round_ = 0;                     // adaptive choices made
  bool probing_ = false;                  // the last choice was a probe (ProbeBudget::Take)
  double draft_step_ms_ = 0;              // EMA per draft step (0 = unmeasured)
  bool static_costs_ = false;             // times are not measured (UseStaticCosts)
  bool free_drafts_ = false;              // MarkDraftsFree
  bool steep_ = false;                    // lone outliers are the curve, not stalls
  bool own_multi_row_ = false;  // a multi-row time not borrowed was recorded (before: all were)
  ProbeBudget probe_;           // accrued by plain steps, spent by probes
  int explore_count_ = 0;       // drafting rounds since trying one draft more
  int since_plain_ = 0;         // rounds since verify(1) was last measured
  int64_t remeasures_ = 0;
  // The estimates by row count and by length, computed once per change of what they depend on
  // (empty: stale). A round's planning asks for them for every candidate length of lookup,
  // extension and assistant, and recomputing them each time (every estimate scanning its
  // neighbours) would cost a sizeable share of a plain step per round on a small model.
  mutable std::vector<double> verify_curve_, monotone_curve_;  // index = rows
  mutable std::vector<double> expected_tokens_;                // index = drafted tokens
};

}  // namespace tandem
