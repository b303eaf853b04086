// Chooses how many tokens to draft each round (0 = plain decoding) from the acceptance measured
// at each draft position and the measured costs of a draft step and of verifying T rows, so that
// speculation is used only where it pays on this machine.
#pragma once

#include <vector>

namespace tandem {

class DraftLengthController {
 public:
  // adaptive = false: always draft `draft_max` (capped per round).
  DraftLengthController(int draft_max, bool adaptive);

  // The draft length for the next round, in [0, cap].
  int Choose(int cap);

  // Decide from acceptance and a fixed cost model instead of measured times: a draft step costs
  // `draft_step_cost` target single-row forwards and each extra verified row 5% of one. Then the
  // draft lengths, and with them a sampled request's output, depend only on the seed.
  void UseStaticCosts(double draft_step_cost);

  // After a round that drafted n tokens of which the first `accepted` were accepted.
  void RecordRound(int n_drafted, int n_accepted);
  // Measured wall time of `n_steps` draft steps, and of a target forward of `rows` rows.
  void RecordDraftTime(int n_steps, double ms);
  void RecordVerifyTime(int rows, double ms);

  // Model estimates (for reports and tests).
  double ConditionalAcceptance(int position) const;  // P(accept i | accepted 0..i-1)
  double ExpectedTokens(int n) const;                // tokens emitted by a round drafting n
  double EstimatedRoundMs(int n) const;              // time of a round drafting n
  int draft_max() const { return draft_max_; }

 private:
  double VerifyMs(int rows) const;
  double MonotoneVerifyMs(int rows) const;  // max of VerifyMs(1..rows)

  int draft_max_;
  bool adaptive_;
  std::vector<double> accepted_, tried_;  // decayed counts per draft position
  std::vector<double> verify_ms_;         // EMA per row count (0 = unmeasured), index = rows
  double draft_step_ms_ = 0;              // EMA per draft step (0 = unmeasured)
  bool static_costs_ = false;             // times are not measured (UseStaticCosts)
  int plain_streak_ = 0;                  // plain rounds since the last probe
  int probe_interval_ = 8;                // plain rounds between probes, doubled after a miss
  int explore_count_ = 0;                 // drafting rounds since trying one draft more
};

}  // namespace tandem
