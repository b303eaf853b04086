// Constrained drafting at the drafter level (issue 16): an MTP drafter facing a grammar takes
// forced tokens without reading its head, stops before forced runs it is told not to pay for,
// has the dense head rescore the allowed tokens its centroid head missed, and a chained draft
// follows the constraint after its lookup tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "sampling/sampler.h"
#include "spec_grammar_pair.h"
#include "speculative/chain_drafter.h"
#include "speculative/draft_constraint.h"
#include "speculative/mtp_drafter.h"

namespace tandem {
namespace {

// A constraint that forces the tokens a script gives per draft position (-1: free, nothing
// masked), for the drafter alone.
class ScriptedConstraint final : public DraftConstraint {
 public:
  explicit ScriptedConstraint(std::vector<int32_t> script) : script_(std::move(script)) {}
  bool MaskLogits(float*, int) override { return true; }
  void Advance(int32_t) override { ++at_; }
  int32_t ForcedNext() override { return at_ < script_.size() ? script_[at_] : -1; }
  int ForcedRun(int max) override {
    int n = 0;
    while (n < max && at_ + n < script_.size() && script_[at_ + n] >= 0) ++n;
    return n;
  }

 private:
  std::vector<int32_t> script_;
  size_t at_ = 0;
};

// A constraint that allows only `ids` at every position.
class AllowOnlyConstraint final : public DraftConstraint {
 public:
  explicit AllowOnlyConstraint(std::vector<int32_t> ids) : ids_(std::move(ids)) {}
  bool MaskLogits(float* logits, int n_vocab) override {
    bool any = false;
    for (int t = 0; t < n_vocab; ++t) {
      if (std::find(ids_.begin(), ids_.end(), t) == ids_.end()) {
        logits[t] = -std::numeric_limits<float>::infinity();
      } else {
        any = any || std::isfinite(logits[t]);
      }
    }
    return any;
  }
  void Advance(int32_t) override {}
  bool AllowedTokens(int max, std::vector<int32_t>& ids) override {
    if (static_cast<int>(ids_.size()) > max) return false;
    ids = ids_;
    return true;
  }

 private:
  std::vector<int32_t> ids_;
};

// A 10-token prompt forwarded through the pair's target into `cache`: the drafters' context.
std::vector<int32_t> ForwardTenTokenPrompt(const Pair& pair, KvCache& cache, ForwardOutput& out,
                                           ThreadPool& pool) {
  ForwardBatch batch;
  std::vector<int32_t> prompt;
  for (int i = 0; i < 10; ++i) prompt.push_back(2 + (i * 29) % 500);
  for (size_t i = 0; i < prompt.size(); ++i) batch.Add(prompt[i], static_cast<int>(i), 0, true);
  pair.target->Forward(batch, cache, out, pool);
  return prompt;
}

// A request to draft up to n_max tokens after that prompt, from token 5 at the next position.
DraftRequest AfterPrompt(const std::vector<int32_t>& prompt, const ForwardOutput& out, int n_max) {
  DraftRequest r;
  r.last = 5;
  r.pos = static_cast<int32_t>(prompt.size());
  r.hidden = out.Hidden(static_cast<int>(prompt.size()) - 1);
  r.history = prompt;
  r.n_max = n_max;
  return r;
}

// Where the centroid head kept none of the few tokens a constraint allows, the MTP drafter has
// the dense head score those instead of ending the draft: the draft is the best of them.
TEST(SpecGrammar, CentroidMissesAreRescoredOverTheAllowedTokens) {
  Pair pair = MakePair("sg_rescore");
  ASSERT_TRUE(pair.assistant->uses_centroids());
  ThreadPool pool(1);
  auto cache = pair.target->NewKvCache({.type = TensorType::kF32, .n_ctx = 64});
  ForwardOutput out;
  const std::vector<int32_t> prompt = ForwardTenTokenPrompt(pair, *cache, out, pool);
  const float* hidden = out.Hidden(static_cast<int>(prompt.size()) - 1);
  const int32_t pos = static_cast<int32_t>(prompt.size());
  // Three tokens the centroid head does not score at the first draft step, and their dense
  // logits there.
  DraftOutput step;
  pair.assistant->Step({{5, pos, 0, hidden}}, *cache, step, pool);
  std::vector<int32_t> ids;
  for (int t = 0; t < step.n_vocab && ids.size() < 3; ++t) {
    if (std::isinf(step.Logits(0)[t])) ids.push_back(t);
  }
  ASSERT_EQ(ids.size(), 3u);
  std::vector<float> dense(3);
  pair.assistant->TokenLogits(step.Normed(0, pair.assistant->config().n_embd), ids, dense.data(),
                              pool);
  const int32_t best = ids[std::max_element(dense.begin(), dense.end()) - dense.begin()];
  MtpDrafter drafter(*pair.assistant, pool);
  AllowOnlyConstraint constraint(ids);
  DraftRequest r = AfterPrompt(prompt, out, 3);
  r.constraint = &constraint;
  DraftResult d;
  DraftAlone(drafter, r, *cache, d);
  ASSERT_EQ(d.tokens.size(), 3u);
  EXPECT_EQ(d.tokens[0], best);
  for (const int32_t t : d.tokens) EXPECT_NE(std::find(ids.begin(), ids.end(), t), ids.end());
}

// The MTP drafter pays no step for a forced run it stops at (forced_run_max below the run's
// length), and drafts through a shorter one taking the forced tokens as they are (whatever its
// head scores; a point mass for a sampled request) and going on after it. A chained draft masks
// its model extension after its lookup tokens.
TEST(SpecGrammar, DraftsStopAtLongForcedRunsWithoutDrafterSteps) {
  Pair pair = MakePair("sg_forced_run");
  ThreadPool pool(1);
  auto cache = pair.target->NewKvCache({.type = TensorType::kF32, .n_ctx = 64});
  ForwardOutput out;
  const std::vector<int32_t> prompt = ForwardTenTokenPrompt(pair, *cache, out, pool);
  MtpDrafter drafter(*pair.assistant, pool);
  SamplingParams sampling;
  sampling.temperature = 0.9f;
  Sampler sampler(sampling);
  Rng rng(7, 1);
  // Positions 2 and 3 are forced (a run of 2 tokens); the rest are the drafter's choice.
  const std::vector<int32_t> script = {-1, -1, 300, 301, -1, -1};
  for (const bool sampled : {false, true}) {
    DraftRequest base = AfterPrompt(prompt, out, 6);
    base.sampler = sampled ? &sampler : nullptr;
    base.rng = &rng;
    DraftResult free;
    DraftAlone(drafter, base, *cache, free);
    ASSERT_EQ(free.tokens.size(), 6u);
    for (const int run_max : {-1, 0, 1, 2, 5}) {
      ScriptedConstraint constraint(script);
      DraftRequest r = base;
      r.constraint = &constraint;
      r.forced_run_max = run_max;
      rng = Rng(7, 1);
      DraftResult d;
      DraftAlone(drafter, r, *cache, d);
      const bool through = run_max < 0 || run_max >= 2;
      const std::string what =
          "sampled " + std::to_string(sampled) + " run_max " + std::to_string(run_max);
      ASSERT_EQ(d.tokens.size(), through ? 6u : 2u) << what;
      EXPECT_EQ(d.steps, through ? 6 : 2) << what;  // no step for the forced run it stops at
      if (!sampled) {  // the free drafts before the run are the drafter's own
        EXPECT_EQ(d.tokens[0], free.tokens[0]) << what;
        EXPECT_EQ(d.tokens[1], free.tokens[1]) << what;
      }
      if (through) {
        EXPECT_EQ(d.tokens[2], 300) << what;
        EXPECT_EQ(d.tokens[3], 301) << what;
      }
      if (sampled) {
        ASSERT_EQ(d.q.size(), d.tokens.size()) << what;
        for (size_t i = 0; i < d.q.size(); ++i) {
          EXPECT_EQ(d.q[i].empty(), i == 2 || i == 3) << what << " position " << i;
        }
      }
      rng = Rng(7, 1);
    }
    rng = Rng(7, 1);
  }
  // A chained draft: the constraint follows the two lookup tokens before the assistant extends
  // them, so the script's forced positions 2 and 3 are the extension's first two tokens.
  ChainDrafter chain(&drafter);
  ScriptedConstraint constraint(script);
  const std::vector<int32_t> lookup = {7, 8};
  DraftRequest r = AfterPrompt(prompt, out, 4);
  r.lookup = lookup;
  r.constraint = &constraint;
  DraftResult d;
  DraftAlone(chain, r, *cache, d);
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{7, 8, 300, 301}));
  EXPECT_EQ(d.n_lookup, 2);
}

}  // namespace
}  // namespace tandem
