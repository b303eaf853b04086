#include "speculative/draft_length_controller.h"

#include <algorithm>
#include <limits>

namespace tandem {
namespace {

constexpr double kDecay = 0.97;       // per round: old evidence fades, so the estimate tracks text
constexpr double kPrior = 0.5;        // acceptance assumed before any evidence ...
constexpr double kPriorWeight = 1.0;  // ... worth this many rounds
constexpr double kTimeEma = 0.2;
constexpr int kExploreEvery = 2;        // drafting rounds between tries of one draft more ...
constexpr double kExploreWithin = 0.9;  // ... rated at least this fraction of the best
constexpr int kRemeasureEvery = 128;    // drafting rounds between plain steps that re-measure it
constexpr int kStaleAfter = 64;   // rounds after which a new verify time (T > 1) replaces the old
constexpr double kOutlier = 2.0;  // a lone verify time this far above its prediction: a stall

void Ema(double& slot, double value) {
  slot = slot == 0 ? value : slot + kTimeEma * (value - slot);
}

}  // namespace

void DraftLengthController::Samples::Add(double value, double plain_ms) {
  ms[next] = value;
  plain[next] = plain_ms;
  next = (next + 1) % kSamples;
  count = std::min(count + 1, kSamples);
}

double DraftLengthController::Samples::Min(double plain_now) const {
  double best = 0;
  for (int i = 0; i < count; ++i) {
    const double v = plain[i] > 0 && plain_now > 0 ? ms[i] * plain_now / plain[i] : ms[i];
    best = i == 0 ? v : std::min(best, v);
  }
  return best;
}

double DraftLengthController::PlainMs() const {
  return verify_ms_[1].Min(0.0);
}

double DraftLengthController::MeasuredMs(int rows) const {
  return rows == 1 ? PlainMs() : verify_ms_[rows].Min(PlainMs());
}

DraftLengthController::DraftLengthController(int draft_max, bool adaptive)
    : draft_max_(std::max(0, draft_max)),
      adaptive_(adaptive),
      accepted_(draft_max_, 0.0),
      tried_(draft_max_, 0.0),
      verify_ms_(draft_max_ + 2),
      measured_at_(draft_max_ + 2, 0) {}

// A position with little evidence leans on the one before it (acceptance varies slowly with the
// position), so a high acceptance rates the lengths not tried yet high too.
double DraftLengthController::ConditionalAcceptance(int i) const {
  double p = kPrior;
  for (int j = 0; j <= i; ++j) p = (accepted_[j] + p * kPriorWeight) / (tried_[j] + kPriorWeight);
  return p;
}

double DraftLengthController::ExpectedTokens(int n) const {
  if (expected_tokens_.empty()) {
    expected_tokens_.resize(draft_max_ + 1);
    double expected = 1.0, all_accepted = 1.0, p = kPrior;
    expected_tokens_[0] = expected;
    for (int i = 0; i < draft_max_; ++i) {
      p = (accepted_[i] + p * kPriorWeight) / (tried_[i] + kPriorWeight);
      all_accepted *= p;
      expected += all_accepted;
      expected_tokens_[i + 1] = expected;
    }
  }
  return expected_tokens_[std::clamp(n, 0, draft_max_)];
}

bool DraftLengthController::Known(int rows) const {
  // A drafter's time keeps counting however old it is: it is rescaled to today's plain step
  // (Samples::Min), and a lone one far above its prediction is rated at the prediction
  // (EstimatedVerifyMs), so a stall does not rule its length out. Forgetting old times made
  // every length look cheap again after kStaleAfter rounds, a round of tries no budget paid for
  // (an assistant that does not pay retried every kStaleAfter steps, each try a draft step and a
  // dear verify); only budgeted probes and exploration retry it now, and a length
  // re-measured after kStaleAfter rounds replaces its old times (RecordVerifyTime). Free drafts
  // (prompt lookup) still forget: their retry costs verify rows only, and where verifying 2
  // rows costs a fixed step it is how a lookup ruled out by a few early rejections reaches the
  // long proposals that pay (the free workload: without it lookup stayed off 150 steps).
  return verify_ms_[rows].count > 0 && (!free_drafts_ || Fresh(rows));
}

bool DraftLengthController::Fresh(int rows) const {
  return static_costs_ || rows == 1 || round_ - measured_at_[rows] <= kStaleAfter;
}

bool DraftLengthController::LoneOutlier(int rows) const {
  return Known(rows) && !Confirmed(rows) &&
         MeasuredMs(rows) > kOutlier * NeighbourVerifyMs(rows, true);
}

void DraftLengthController::UpdateSteep() {
  // A stall hits one forward; a steep verify curve (a 2-thread forward on a shared VM waiting
  // for the busy vCPU, a compute-bound target) every multi-row one. Lone times far above their
  // prediction are stalls unless they are the majority of the row counts measured, and at
  // least two: then they are the curve, and believed.
  int high = 0, normal = 0;
  for (int rows = 2; rows < static_cast<int>(verify_ms_.size()); ++rows) {
    if (!Known(rows)) continue;
    if (LoneOutlier(rows)) {
      ++high;
    } else {
      ++normal;
    }
  }
  steep_ = high >= 2 && high > normal;
}

bool DraftLengthController::Confirmed(int rows) const {
  return Known(rows) && (rows == 1 || static_costs_ || verify_ms_[rows].count > 1);
}

void DraftLengthController::BuildCurve() const {
  const size_t n = verify_ms_.size();
  verify_curve_.assign(n, 0.0);
  monotone_curve_.assign(n, 0.0);
  for (size_t rows = 1; rows < n; ++rows) {
    verify_curve_[rows] = ComputeVerifyMs(static_cast<int>(rows));
    monotone_curve_[rows] =
        rows == 1 ? verify_curve_[1] : std::max(monotone_curve_[rows - 1], verify_curve_[rows]);
  }
}

double DraftLengthController::VerifyMs(int rows) const {
  if (verify_curve_.empty()) BuildCurve();
  return verify_curve_[rows];
}

double DraftLengthController::ComputeVerifyMs(int rows) const {
  double ms = EstimatedVerifyMs(rows);
  // T rows never cost less than one plus kMinRowCost per extra row, nor, by the estimate, more
  // than T single-row forwards (the weights are read once either way) unless repeated
  // measurements say so: a 2-thread forward on a shared VM waits for the busy vCPU, and there
  // verify(2) can cost several plain steps (a probe priced lower overspent its budget).
  if (Known(1)) {
    const double plain = PlainMs();
    if (!Confirmed(rows) && !steep_) ms = std::min(ms, rows * plain);
    ms = std::max(ms, (1.0 + kMinRowCost * (rows - 1)) * plain);
  }
  return ms;
}

double DraftLengthController::RowCostShare(int rows) const {
  // Beyond the longest row count this controller keeps, the last one's share.
  rows = std::min(rows, static_cast<int>(verify_ms_.size()) - 1);
  const double plain = rows >= 2 && Known(1) ? VerifyMs(1) : 0.0;
  if (!(plain > 0)) return kMinRowCost;
  return std::max(kMinRowCost, (VerifyMs(rows) - VerifyMs(rows - 1)) / plain);
}

double DraftLengthController::RowPriceTokens(int n, int rows) const {
  const double round = EstimatedRoundMs(n);
  // Without plain steps (a fixed draft length never takes one) the plain step is inferred from
  // the round's verify time by the static row cost; before any time, the static model prices
  // the row (a plain step 1, a draft step DraftStepMs's default share of it).
  double plain = PlainMs();
  if (!(plain > 0)) plain = MonotoneVerifyMs(n + 1) / (1.0 + kStaticRowCost * n);
  if (!(plain > 0) || !(round > 0)) {
    return kStaticRowCost * ExpectedTokens(n) /
           (1.0 + n * (kStaticRowCost + kDefaultDraftStepShare));
  }
  return RowCostShare(rows) * plain * ExpectedTokens(n) / round;
}

double DraftLengthController::EstimatedVerifyMs(int rows) const {
  if (Confirmed(rows)) return MeasuredMs(rows);
  // One measurement may be a stall that would rule its length (and, as verify times never
  // decrease in the row count, every longer one) out until it went stale: one far above what
  // the confirmed row counts predict is not believed, so the length is tried again.
  if (Known(rows)) {
    const double predicted = NeighbourVerifyMs(rows, true);
    const double ms = MeasuredMs(rows);
    return ms > kOutlier * predicted && !steep_ ? predicted : ms;
  }
  return NeighbourVerifyMs(rows, false);
}

double DraftLengthController::NeighbourVerifyMs(int rows, bool confirmed_only) const {
  // Unmeasured: interpolate between the nearest measured row counts, or extrapolate from one
  // with a modest per-row slope (weights are read once per call whatever the row count).
  const auto usable = [&](int r) { return confirmed_only ? Confirmed(r) : Known(r); };
  const auto at = [&](int r) { return confirmed_only ? MeasuredMs(r) : EstimatedVerifyMs(r); };
  int lo = rows - 1, hi = rows + 1;
  while (lo >= 1 && !usable(lo)) --lo;
  while (hi < static_cast<int>(verify_ms_.size()) && !usable(hi)) ++hi;
  const bool has_lo = lo >= 1, has_hi = hi < static_cast<int>(verify_ms_.size());
  if (has_lo && has_hi) return at(lo) + (at(hi) - at(lo)) * (rows - lo) / double(hi - lo);
  if (has_lo) {
    // Past the largest measured row count: continue the slope of the two largest measured ones
    // (a fixed 5 % per row before a second one exists), so longer drafts are not written off
    // by a pessimistic guess they never get to disprove. For free drafts (prompt lookup) the
    // plain step is not one of them: going from 1 row to 2 can cost a fixed step (a 2-thread
    // forward on a shared VM waits for the busy vCPU, a cost paid once and not per row), and
    // continuing that step per row ruled out every lookup length after the model's
    // first rounds measured verify(2); a lookup length tried on that guess costs no draft step.
    const int first = free_drafts_ ? 2 : 1;
    int lo2 = lo - 1;
    while (lo2 >= first && !usable(lo2)) --lo2;
    const double slope =
        lo2 >= first ? std::max(0.0, (at(lo) - at(lo2)) / double(lo - lo2)) : 0.05 * at(lo);
    return at(lo) + slope * (rows - lo);
  }
  if (has_hi) return at(hi) / (1.0 + 0.05 * (hi - rows));
  return 1.0 + 0.05 * (rows - 1);  // nothing measured: relative units
}

double DraftLengthController::MonotoneVerifyMs(int rows) const {
  // Verifying more rows never costs less: a noisy or stale estimate (verify(1) last measured
  // while the weights were still being paged in) must not make drafting look free.
  if (verify_curve_.empty()) BuildCurve();
  return monotone_curve_[rows];
}

double DraftLengthController::ProbeExcessMs() const {
  return EstimatedRoundMs(1) - VerifyMs(1);
}

double DraftLengthController::DraftStepMs() const {
  if (free_drafts_) return 0.0;
  return draft_step_ms_ > 0 ? draft_step_ms_ : kDefaultDraftStepShare * VerifyMs(1);
}

double DraftLengthController::EstimatedRoundMs(int n) const {
  return n * DraftStepMs() + MonotoneVerifyMs(n + 1);
}

int DraftLengthController::LongestMeasured() const {
  int longest = 0;
  for (int rows = 2; rows < static_cast<int>(verify_ms_.size()); ++rows) {
    if (verify_ms_[rows].count > 0) longest = rows - 1;
  }
  return longest;
}

int DraftLengthController::SearchLimit(int cap) const {
  // Verify costs past the longest measured row count are extrapolated: climb to at most twice
  // the longest length measured, so a guess is checked before it is relied on.
  const int longest = LongestMeasured();
  // Free drafts may climb to the positions whose acceptance has been observed (a followed
  // lookup proposal's kFollowMax tokens): where a multi-row verify costs a fixed step, only
  // long drafts pay, and doubling from a length that does not pay never got there.
  int observed = 0;
  if (free_drafts_) {
    while (observed < draft_max_ && tried_[observed] >= 1.0) ++observed;
  }
  return std::min({cap, draft_max_, std::max(observed, longest == 0 ? 1 : 2 * longest)});
}

DraftLengthController::Estimate DraftLengthController::BestByEstimates(int cap) const {
  const int limit = SearchLimit(cap);
  // Drafting must beat plain decoding by a margin: gains inside the timing noise are not gains.
  Estimate best{0, (1.0 + kMinGain) * ExpectedTokens(0) / EstimatedRoundMs(0), limit};
  for (int n = 1; n <= limit; ++n) {
    const double rate = ExpectedTokens(n) / EstimatedRoundMs(n);
    if (rate > best.rate) best = {n, rate, limit};
  }
  return best;
}

int DraftLengthController::Choose(int cap) {
  // Set only by a probe; a probe whose round was never recorded (the planner chose another
  // source, the round lost its drafts) is forgotten here.
  probing_ = false;
  if (std::min(cap, draft_max_) <= 0) return 0;
  if (!adaptive_) return std::min(cap, draft_max_);
  ++round_;
  CostsChanged();  // which times are fresh
  // The plain step is the yardstick: once a draft has been verified, measure it before
  // relying on a guess of it (it only gets measured by plain steps).
  if (!static_costs_ && verify_ms_[1].count == 0 && LongestMeasured() > 0) {
    ++remeasures_;
    return 0;
  }
  const Estimate estimate = BestByEstimates(cap);
  const int best = estimate.n;
  const double best_rate = estimate.rate;
  const int limit = estimate.limit;
  if (best == 0) {
    // Speculation does not pay by the current estimates. Probe with one draft now and then so
    // the estimates can recover when the text becomes predictable, but only out of the budget
    // the plain steps have banked: at zero acceptance the probes cost at most ProbeBudget::kShare.
    since_plain_ = 0;
    probing_ = probe_.Take(ProbeExcessMs(), VerifyMs(1));
    return probing_ ? 1 : 0;
  }
  probe_.Reset();
  // Costs drift (other processes, thermal limits); the plain step is measured only by plain
  // steps, so take one now and then while drafting pays.
  if (!static_costs_ && ++since_plain_ >= kRemeasureEvery) {
    since_plain_ = 0;
    ++remeasures_;
    return 0;
  }
  // Verify costs are only measured for the lengths tried, and the acceptance of a position only
  // by drafting past it. Every few rounds, try one more than the best when the model rates it
  // nearly as good and knows it poorly (its cost unmeasured or stale, its acceptance unseen):
  // high acceptance climbs to the length that pays most, and a known loser is not re-tried.
  if (best < limit && ++explore_count_ >= kExploreEvery) {
    explore_count_ = 0;
    const int rows = best + 2;
    const bool unknown = verify_ms_[rows].count == 0 || tried_[best] < 1.0 ||
                         (!static_costs_ && round_ - measured_at_[rows] > kRemeasureEvery);
    if (unknown &&
        ExpectedTokens(best + 1) / EstimatedRoundMs(best + 1) >= kExploreWithin * best_rate) {
      return best + 1;
    }
  }
  return best;
}

void DraftLengthController::RecordRound(int n_drafted, int n_accepted) {
  expected_tokens_.clear();
  for (int i = 0; i < draft_max_; ++i) {
    accepted_[i] *= kDecay;
    tried_[i] *= kDecay;
  }
  // Position i counts only when every earlier draft was accepted (its fate is then observed).
  for (int i = 0; i < n_drafted && i <= n_accepted && i < draft_max_; ++i) {
    tried_[i] += 1.0;
    if (i < n_accepted) accepted_[i] += 1.0;
  }
  // A hit keeps probes frequent; only a probe's miss spaces them out (misses of rounds drafted
  // because drafting paid do not: after a bad stretch the first probes come soon).
  if (n_drafted > 0 && (probing_ || n_accepted > 0)) probe_.Observe(n_accepted > 0);
  probing_ = false;
}

void DraftLengthController::RecordNextPosition(int position, bool matched) {
  if (position < 0 || position >= draft_max_) return;
  expected_tokens_.clear();
  tried_[position] += 1.0;
  if (matched) accepted_[position] += 1.0;
}

void DraftLengthController::ContinueFrom(const DraftLengthController& earlier) {
  if (draft_max_ != earlier.draft_max_ || adaptive_ != earlier.adaptive_ ||
      free_drafts_ != earlier.free_drafts_ || static_costs_ || earlier.static_costs_) {
    return;
  }
  accepted_ = earlier.accepted_;
  tried_ = earlier.tried_;
  probing_ = false;
  expected_tokens_.clear();
  verify_ms_[1] = earlier.verify_ms_[1];
  draft_step_ms_ = earlier.draft_step_ms_;
  CostsChanged();
  probe_ = earlier.probe_;
  probe_.ClearCount();
}

void DraftLengthController::MarkDraftsFree() {
  free_drafts_ = true;
  CostsChanged();
}

void DraftLengthController::UseStaticCosts(double draft_step_cost) {
  static_costs_ = true;
  draft_step_ms_ = std::max(1e-6, draft_step_cost);
  for (size_t rows = 1; rows < verify_ms_.size(); ++rows) {
    verify_ms_[rows] = Samples();
    verify_ms_[rows].Add(1.0 + kStaticRowCost * (rows - 1), 0.0);
  }
  CostsChanged();
}

void DraftLengthController::RecordDraftTime(int n_steps, double ms) {
  if (n_steps > 0 && !static_costs_) Ema(draft_step_ms_, ms / n_steps);
}

void DraftLengthController::RecordVerifyTime(int rows, double ms, bool borrowed) {
  if (static_costs_) return;
  if (rows < 1 || rows >= static_cast<int>(verify_ms_.size())) return;
  if (rows == 1) borrowed = false;  // a plain step is a plain step
  // Borrowed times stand in only until this controller has a multi-row time of its own: then
  // its curve is inter- and extrapolated from its own times (a borrowed verify(2), dearer after
  // the model's steps than after lookup's own rounds, ruled lookup's short drafts out).
  if (borrowed && own_multi_row_) return;
  if (!borrowed && rows >= 2 && !own_multi_row_) {
    // Until now every multi-row time was borrowed.
    own_multi_row_ = true;
    for (size_t r = 2; r < verify_ms_.size(); ++r) verify_ms_[r] = Samples();
  }
  // An old time (maybe one stall of a busy machine, or a busier hour) is replaced, not
  // combined with.
  if (!Fresh(rows)) verify_ms_[rows] = Samples();
  verify_ms_[rows].Add(ms, rows == 1 ? 0.0 : PlainMs());
  measured_at_[rows] = round_;
  if (rows == 1) since_plain_ = 0;
  UpdateSteep();
  CostsChanged();
}

}  // namespace tandem
