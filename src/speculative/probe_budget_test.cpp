// ProbeBudget: probes cost at most the banked share of the rounds' time, and a share divided
// among a batch's slots divides their probes alike.
#include "speculative/probe_budget.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

// Rounds of `round_ms` in which a probe (always missing) would cost `excess_ms`: the time the
// probes take, as a share of the whole.
double ProbedShare(double share, int rounds, double round_ms, double excess_ms, int64_t* probes) {
  ProbeBudget budget;
  budget.SetShare(share);
  double probed = 0;
  for (int i = 0; i < rounds; ++i) {
    if (budget.Take(excess_ms, round_ms)) {
      probed += excess_ms;
      budget.Observe(false);
    }
  }
  *probes = budget.probes();
  return probed / (rounds * round_ms + probed);
}

TEST(ProbeBudget, ProbesCostAtMostTheBankedShare) {
  for (double excess : {0.05, 0.3, 1.0, 3.0}) {  // in rounds
    int64_t probes = 0;
    const double share = ProbedShare(ProbeBudget::kShare, 20000, 1.0, excess, &probes);
    EXPECT_LE(share, ProbeBudget::kShare) << excess;
    EXPECT_GT(probes, 0) << excess;
  }
}

TEST(ProbeBudget, ABatchsSlotsTogetherBankOneShare) {
  // Dear probes (a draft step and a verify row of three rounds' time): the bank, not the
  // interval, sets their pace, so four slots each banking a quarter probe a quarter as often,
  // and together as often as one slot alone.
  int64_t alone = 0, each = 0;
  ProbedShare(ProbeBudget::kShare, 40000, 1.0, 3.0, &alone);
  ProbedShare(ProbeBudget::kShare / 4, 40000, 1.0, 3.0, &each);
  EXPECT_GT(alone, 50);
  EXPECT_NEAR(4.0 * each, alone, 0.1 * alone);
  ProbeBudget budget;
  EXPECT_EQ(budget.probes(), 0);
  budget.SetShare(0.5);
  EXPECT_FALSE(budget.Take(1.0, 1.0));
  budget.ClearCount();
  EXPECT_EQ(budget.probes(), 0);
}

}  // namespace
}  // namespace tandem
