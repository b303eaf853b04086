#include "speculative/speculation_stats.h"

#include <algorithm>

namespace tandem {
namespace {

constexpr int kMinLoopRun = 16;  // a copy this long of the text one period back is a loop

void AddCounts(std::vector<int64_t>& to, const std::vector<int64_t>& from) {
  if (to.size() < from.size()) to.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) to[i] += from[i];
}

std::vector<double> Ratios(const std::vector<int64_t>& accepted,
                           const std::vector<int64_t>& tried) {
  std::vector<double> out;
  for (size_t i = 0; i < tried.size(); ++i) {
    out.push_back(tried[i] ? double(accepted[i]) / double(tried[i]) : 0.0);
  }
  return out;
}

}  // namespace

void SourceStats::Record(int n, int n_accepted) {
  if (n <= 0) return;
  drafted += n;
  accepted += n_accepted;
  if (static_cast<int>(drafted_at.size()) < n) {
    drafted_at.resize(n, 0);
    accepted_at.resize(n, 0);
  }
  for (int i = 0; i < n; ++i) {
    ++drafted_at[i];
    if (i < n_accepted) ++accepted_at[i];
  }
}

void SourceStats::Add(const SourceStats& o) {
  drafted += o.drafted;
  accepted += o.accepted;
  AddCounts(drafted_at, o.drafted_at);
  AddCounts(accepted_at, o.accepted_at);
}

std::vector<double> SourceStats::AcceptanceByPosition() const {
  return Ratios(accepted_at, drafted_at);
}

nlohmann::json SourceStats::ToJson() const {
  return {
      {"drafted", drafted},
      {"accepted", accepted},
      {"acceptance_rate", drafted ? double(accepted) / double(drafted) : 0.0},
      {"acceptance_by_position", AcceptanceByPosition()},
  };
}

void SpeculationStats::RecordRound(int n_drafted, int n_accepted, int n_lookup, bool from_suffix) {
  n_lookup = std::clamp(n_lookup, 0, n_drafted);
  (from_suffix ? suffix : ngram).Record(n_lookup, std::min(n_accepted, n_lookup));
  // A model part after lookup drafts is only tested when every lookup draft was accepted; an
  // untested part is not counted (it says nothing of the model).
  if (n_accepted >= n_lookup) model.Record(n_drafted - n_lookup, n_accepted - n_lookup);
  ++rounds;
  drafted += n_drafted;
  accepted += n_accepted;
  if (static_cast<int>(drafted_at.size()) < n_drafted) {
    drafted_at.resize(n_drafted, 0);
    accepted_at.resize(n_drafted, 0);
  }
  for (int i = 0; i < n_drafted; ++i) {
    ++drafted_at[i];
    if (i < n_accepted) ++accepted_at[i];
  }
}

SpeculationStats::GuessOutcome SpeculationStats::RecordForced(const std::vector<bool>& guesses,
                                                              int n_drafter, int n_accepted) {
  GuessOutcome outcome;
  const int n = static_cast<int>(guesses.size());
  if (n == 0) return outcome;
  const int tail_accepted = std::clamp(n_accepted - n_drafter, 0, n);
  // Verification reached the tail's first tail_accepted + 1 drafts, if it reached the tail.
  const int tail_reached = n_accepted >= n_drafter ? std::min(n, tail_accepted + 1) : 0;
  for (int i = 0; i < n; ++i) {
    (guesses[i] ? guessed : forced) += 1;
    if (i < tail_accepted) (guesses[i] ? guessed_accepted : forced_accepted) += 1;
    if (guesses[i] && i < tail_reached) ++outcome.reached;
    if (guesses[i] && i < tail_accepted) ++outcome.accepted;
  }
  if (n_accepted >= n_drafter) grammar.Record(n, tail_accepted);
  return outcome;
}

double SpeculationStats::TokensPerTargetForward() const {
  const int64_t forwards = rounds + plain_steps;
  return forwards ? double(generated) / double(forwards) : 0.0;
}

double SpeculationStats::EstimatedSpeedup() const {
  const int64_t forwards = rounds + plain_steps;
  const double spent = plan_ms + draft_ms + verify_ms;
  if (forwards == 0 || spent <= 0) return 0.0;
  const double plain_step_ms = SpeedupIsUpperBound() ? (verify_ms - plain_ms) / double(rounds)
                                                     : plain_ms / double(plain_steps);
  return double(rounds + accepted + forced_accepted + guessed_accepted + plain_steps) *
         plain_step_ms / spent;
}

std::vector<double> SpeculationStats::AcceptanceByPosition() const {
  return Ratios(accepted_at, drafted_at);
}

void SpeculationStats::Add(const SpeculationStats& o) {
  rounds += o.rounds;
  plain_steps += o.plain_steps;
  drafted += o.drafted;
  accepted += o.accepted;
  forced += o.forced;
  forced_accepted += o.forced_accepted;
  limited_logit_rows += o.limited_logit_rows;
  tree_rounds += o.tree_rounds;
  tree_branches += o.tree_branches;
  tree_branches_accepted += o.tree_branches_accepted;
  guessed += o.guessed;
  guessed_accepted += o.guessed_accepted;
  generated += o.generated;
  repetition_accepted += o.repetition_accepted;
  probes += o.probes;
  remeasures += o.remeasures;
  continued += o.continued;
  AddCounts(drafted_at, o.drafted_at);
  AddCounts(accepted_at, o.accepted_at);
  ngram.Add(o.ngram);
  suffix.Add(o.suffix);
  grammar.Add(o.grammar);
  model.Add(o.model);
  draft_ms += o.draft_ms;
  verify_ms += o.verify_ms;
  plain_ms += o.plain_ms;
  plan_ms += o.plan_ms;
  other_ms += o.other_ms;
}

nlohmann::json SpeculationStats::ToJson() const {
  nlohmann::json j = {
      {"rounds", rounds},
      {"plain_steps", plain_steps},
      {"probes", probes},
      {"remeasures", remeasures},
      {"continued", continued},
      {"drafted", drafted},
      {"accepted", accepted},
      {"forced", forced},
      {"forced_accepted", forced_accepted},
      {"guessed", guessed},
      {"guessed_accepted", guessed_accepted},
      {"tree_rounds", tree_rounds},
      {"tree_branches", tree_branches},
      {"tree_branches_accepted", tree_branches_accepted},
      {"forced_acceptance_rate", ForcedAcceptanceRate()},
      {"acceptance_rate", AcceptanceRate()},
      {"acceptance_by_position", AcceptanceByPosition()},
      {"mean_accepted_length", MeanAcceptedLength()},
      {"tokens_per_target_forward", TokensPerTargetForward()},
      {"draft_ms", draft_ms},
      {"verify_ms", verify_ms},
      {"plain_ms", plain_ms},
      {"plan_ms", plan_ms},
      {"speedup_estimate", EstimatedSpeedup()},
      {"speedup_estimate_is_upper_bound", SpeedupIsUpperBound()},
      {"speedup_baseline_min_plain_steps", kMinBaselinePlainSteps},
      {"other_ms", other_ms},
      {"repetition_share", accepted ? double(repetition_accepted) / double(accepted) : 0.0},
  };
  for (const auto& [name, src] : Sources()) j["by_source"][name] = src->ToJson();
  return j;
}

bool InRepetitionLoop(const std::vector<int32_t>& t, int max_period, int min_repeats) {
  const int n = static_cast<int>(t.size());
  for (int period = 1; period <= max_period && period < n; ++period) {
    // Tokens needed equal to the one `period` before: a short span repeated min_repeats times,
    // or for a long period (a block of lines) a copy of at least half of it and kMinLoopRun.
    const int need = std::min((min_repeats - 1) * period, std::max(kMinLoopRun, period / 2));
    if (need > n - period) continue;
    int run = 0;
    while (run < need && t[n - 1 - run] == t[n - 1 - run - period]) ++run;
    if (run == need) return true;
  }
  return false;
}

}  // namespace tandem
