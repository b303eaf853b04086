// Speculative sampling is lossless: with temperature > 0 the tokens emitted through MTP drafting
// (and prompt lookup, and suffix drafting) follow the target's own sampling distribution.
// Chi-square goodness of fit over many seeds on a small-vocabulary fixture, against the exact
// distribution computed from the target.
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>

#include "base/thread_pool.h"
#include "chi_square.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "sampling/sampler.h"
#include "speculative/loaded_drafters.h"
#include "speculative/suffix_drafter.h"

namespace tandem {
namespace {

// Samples t1, t2 kRuns times with speculation `type` drafting one token for t2 and checks t2's
// marginal against the exact one computed from plain forwards.
void CheckSecondToken(SpecType type, const std::string& name, int tree_width = 0) {
  const std::string dir = testing::TempDir() + name;
  RandomModelOptions options;
  options.weight_type = TensorType::kQ8_0;
  WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, dir + "ss_target.gguf");
  WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", true), options,
                             dir + "ss_assistant.gguf");
  auto target = Gemma4Model::Load(dir + "ss_target.gguf");
  auto assistant = Gemma4Assistant::Load(dir + "ss_assistant.gguf", *target);
  ThreadPool pool(1);
  // Prompt lookup (1-grams) proposes t2 whenever t1 occurred in the prompt: what followed it.
  std::vector<int32_t> prompt = {2, 310, 311, 312, 313};
  if (UsesNgram(type)) {
    for (int32_t t = 3; t < 300; ++t) prompt.push_back((t * 7) % 300 + 3);
  }

  GenerateParams params;
  params.n_predict = 3;  // t1 from the prompt's logits, then a round drafting one token for t2
  params.sampling.temperature = 1.0f;
  params.sampling.top_k = 40;
  params.sampling.top_p = 1.0f;
  params.sampling.min_p = 0.0f;
  params.spec.type = type;
  params.spec.draft_max = 1;
  params.spec.adaptive = false;
  params.spec.ngram_min = 1;
  params.spec.tree_width = tree_width;

  DrafterSet drafters = MakeDrafters({*target, assistant.get(), nullptr, pool});
  if (UsesSuffix(type)) {
    // Suffix drafting proposes t2 whenever an earlier request held the prompt's last tokens and
    // t1: what followed them there. Every run adds its own tokens too, so later runs draft what
    // an earlier run sampled after the same t1 (each run's proposal is fixed before its own
    // draws: the marginal is still the target's).
    SuffixIndex& index = *dynamic_cast<SuffixDrafter*>(drafters.For(SpecType::kSuffix))->index();
    const std::vector<int32_t> tail(prompt.end() - (SuffixIndex::kShortKey - 1), prompt.end());
    for (int32_t t = 3; t < 300; ++t) {
      std::vector<int32_t> doc = tail;
      doc.push_back(t);
      doc.push_back((t * 11) % 300 + 3);
      index.Add("", doc);
    }
  }
  Generator gen(*target, std::move(drafters), pool, {.type = TensorType::kF32, .n_ctx = 512});
  const int V = target->config().n_vocab;
  std::vector<int> observed(V, 0);
  int64_t drafted = 0, accepted = 0, lookup_drafted = 0, lookup_accepted = 0;
  int64_t suffix_drafted = 0, suffix_accepted = 0;
  int64_t tree_rounds = 0, branches = 0, branches_accepted = 0;
  const int kRuns = 4000;
  std::vector<std::vector<int32_t>> alone(kRuns);
  for (int seed = 0; seed < kRuns; ++seed) {
    params.sampling.seed = static_cast<uint32_t>(seed);
    GenerateResult r = gen.Generate(prompt, params, nullptr);
    ASSERT_EQ(r.tokens.size(), 3u);
    ++observed[r.tokens[1]];
    drafted += r.spec.drafted;
    accepted += r.spec.accepted;
    lookup_drafted += r.spec.ngram.drafted;
    lookup_accepted += r.spec.ngram.accepted;
    suffix_drafted += r.spec.suffix.drafted;
    suffix_accepted += r.spec.suffix.accepted;
    tree_rounds += r.spec.tree_rounds;
    branches += r.spec.tree_branches;
    branches_accepted += r.spec.tree_branches_accepted;
    alone[seed] = r.tokens;
  }

  // The server's caller: the same requests, four at a time through a 4-slot engine, give every
  // seed exactly the tokens it got alone, so the test below holds for both callers (lookup
  // alone is covered by chain's lookup part). Not with suffix drafting: there a run's drafts
  // depend on which runs ended before it.
  if (type != SpecType::kNgram && !UsesSuffix(type)) {
    ThreadPool engine_pool(1);
    EngineOptions options;
    options.n_slots = 4;
    options.kv = {.type = TensorType::kF32, .n_ctx = 512};
    options.max_queue = kRuns;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::vector<int32_t>> served(kRuns);
    int finals = 0;
    Engine engine(*target, MakeDrafters({*target, assistant.get(), nullptr, engine_pool}),
                  engine_pool, options);
    for (int seed = 0; seed < kRuns; ++seed) {
      params.sampling.seed = static_cast<uint32_t>(seed);
      engine.Submit({prompt, params, [&, seed](const EngineEvent& e) {
                       std::lock_guard<std::mutex> lock(mu);
                       if (!e.final) {
                         served[seed].push_back(e.token);
                       } else if (++finals == kRuns) {
                         cv.notify_one();
                       }
                       return true;
                     }});
    }
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return finals == kRuns; });
    int differing = 0;
    for (int seed = 0; seed < kRuns; ++seed) differing += served[seed] != alone[seed] ? 1 : 0;
    EXPECT_EQ(differing, 0) << "requests served concurrently must get their tokens alone";
  }
  if (UsesNgram(type) && !UsesSuffix(type)) {  // suffix-chain: the longer suffix match wins
    EXPECT_GT(lookup_drafted, 100) << "prompt lookup must propose";
    EXPECT_LT(lookup_accepted, lookup_drafted) << "lookup drafts must be rejected too";
  }

  if (UsesSuffix(type)) {
    EXPECT_GT(suffix_drafted, 100) << "suffix drafting must propose";
    EXPECT_GT(suffix_accepted, 0) << "suffix drafts must be accepted too";
    EXPECT_LT(suffix_accepted, suffix_drafted) << "suffix drafts must be rejected too";
  }

  if (tree_width > 0) {
    // The tree's rule draws each emitted token from the target with the request's generator,
    // one draw per token as plain sampling makes: the output is plain sampling's, seed by seed.
    EXPECT_GT(tree_rounds, 0) << "trees must be drafted";
    EXPECT_GT(branches, 0);
    EXPECT_GT(branches_accepted, 0) << "the multi-candidate rule must take a branch sometimes";
    EXPECT_LT(branches_accepted, branches) << "and refuse one sometimes";
    Generator plain(*target, {}, pool, {.type = TensorType::kF32, .n_ctx = 512});
    GenerateParams plain_params = params;
    plain_params.spec = SpecOptions{};
    int differing = 0;
    for (int seed = 0; seed < kRuns; seed += 7) {
      plain_params.sampling.seed = static_cast<uint32_t>(seed);
      differing += plain.Generate(prompt, plain_params, nullptr).tokens != alone[seed] ? 1 : 0;
    }
    EXPECT_EQ(differing, 0) << "tree-verified sampling must equal plain sampling seed by seed";
  }
  const bool model = type != SpecType::kNgram && type != SpecType::kSuffix && tree_width == 0;
  if (model) {
    EXPECT_GE(drafted, kRuns);
  }
  // Lookup proposals are rarely likely under a random target: accepted a few times only.
  EXPECT_GT(accepted, model ? 20 : 0) << "the accept branch must be exercised";
  EXPECT_LT(accepted, drafted - 20) << "the residual branch must be exercised";

  // Exact marginal of t2: sum over t1 of p(t1 | prompt) p(t2 | prompt, t1), from plain forwards.
  Sampler sampler(params.sampling);
  ForwardOutput out;
  // The prompt's K/V are computed once; each t1 is one more row (rows are batch-invariant).
  auto cache = target->NewKvCache({.type = TensorType::kF32, .n_ctx = 512});
  ForwardBatch batch;
  const int n_prompt = static_cast<int>(prompt.size());
  for (int i = 0; i < n_prompt; ++i) batch.Add(prompt[i], i, 0, i + 1 == n_prompt);
  target->Forward(batch, *cache, out, pool);
  const std::vector<float> p1 = sampler.Distribution(out.Logits(0), V, prompt);
  std::vector<double> expected(V, 0.0);
  for (int32_t t1 = 0; t1 < V; ++t1) {
    if (p1[t1] == 0) continue;
    std::vector<int32_t> tokens(prompt);
    tokens.push_back(t1);
    cache->Truncate(0, n_prompt);
    batch.Clear();
    batch.Add(t1, n_prompt, 0, true);
    target->Forward(batch, *cache, out, pool);
    const std::vector<float> p2 = sampler.Distribution(out.Logits(0), V, tokens);
    for (int t = 0; t < V; ++t) expected[t] += double(p1[t1]) * p2[t] * kRuns;
  }
  const ChiSquareFit fit = FitChiSquare(expected, observed);
  EXPECT_EQ(fit.impossible_seen, -1) << "a token of zero target probability was emitted";
  ASSERT_GE(fit.bins, 10);
  std::printf("%d runs over %d bins: chi2 %.1f, z %.2f; draft acceptance %.3f\n", kRuns, fit.bins,
              fit.chi2, fit.z, double(accepted) / double(drafted));
  EXPECT_LT(fit.z, 4.0) << "emitted tokens do not follow the target distribution";
}

TEST(SpecSampling, SecondTokenFollowsTheTargetDistribution) {
  CheckSecondToken(SpecType::kMtp, "ss_mtp_");
}

// Draft trees: the assistant's top choices at each node, point masses, verified by following the
// child that carries the target's own draw (docs/mtp.md § Draft trees).
TEST(SpecSampling, SecondTokenFollowsTheTargetDistributionWithDraftTrees) {
  CheckSecondToken(SpecType::kMtp, "ss_tree_", kMaxTreeWidth);
}

// Point-mass drafts (prompt lookup), alone and chained: the lookup draft where t1 recurs, the
// assistant's otherwise.
TEST(SpecSampling, SecondTokenFollowsTheTargetDistributionWithNgramAndChain) {
  CheckSecondToken(SpecType::kNgram, "ss_ngram_");
  CheckSecondToken(SpecType::kChain, "ss_chain_");
}

// Point-mass drafts from earlier requests (suffix drafting), alone and chained with lookup and
// the assistant.
TEST(SpecSampling, SecondTokenFollowsTheTargetDistributionWithSuffixDrafting) {
  CheckSecondToken(SpecType::kSuffix, "ss_suffix_");
  CheckSecondToken(SpecType::kSuffixChain, "ss_suffix_chain_");
}

}  // namespace
}  // namespace tandem
