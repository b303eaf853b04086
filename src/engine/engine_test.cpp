// The engine's promise: every request gets exactly the tokens Generator gives it alone, whatever
// else runs (1, 2 or 3 slots, queueing, prefill chunks merged with drafts and decode rows), the
// prompt cache reuses KV only where it is still valid, and the metrics add up.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/engine_test_util.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "speculative/loaded_drafters.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

using testing_engine::Concat;
using testing_engine::Greedy;
using testing_engine::Models;
using testing_engine::Outcome;
using testing_engine::Prompt;
using testing_engine::Recorder;
using testing_engine::RunAlone;
using testing_engine::Sampled;
using testing_engine::WithDraftModel;
using testing_engine::WithMtp;

struct Case {
  std::vector<int32_t> prompt;
  GenerateParams params;
};

// A mix of prompt lengths, greedy and seeded sampling, MTP on (fixed or adaptive) and off,
// shared prefixes, an EOG stop and a run to the end of the context.
std::vector<Case> MixedCases(const KvCacheOptions& kv) {
  std::vector<Case> cases;
  cases.push_back({Prompt(20, 1), WithMtp(Greedy(24), 4, true)});
  cases.push_back({Prompt(45, 2), Greedy(20)});
  cases.push_back({Prompt(12, 3), WithMtp(Sampled(24, 7), 3, false)});
  cases.push_back({Prompt(30, 4), Sampled(20, 11, 1.0f)});
  cases.push_back({Concat(Prompt(20, 1), Prompt(8, 5)), WithMtp(Greedy(20), 5, false)});
  GenerateParams penalised = WithMtp(Sampled(24, 3, 0.7f), 5, false);
  penalised.sampling.repeat_penalty = 1.3f;
  penalised.spec.draft_min = 2;
  cases.push_back({Prompt(25, 6), penalised});
  // Stops on an EOG token: the 11th token the request would generate.
  GenerateParams eog = WithMtp(Greedy(30), 8, true);
  eog.spec.draft_p_min = 0.2f;
  eog.eog_tokens = {RunAlone(Prompt(9, 7), eog, kv).tokens.at(10)};
  cases.push_back({Prompt(9, 7), eog});
  GenerateParams to_context = WithMtp(Sampled(-1, 99, 1.2f), 2, false);
  to_context.sampling.top_p = 0.9f;
  to_context.sampling.min_p = 0.1f;
  cases.push_back({Concat(Prompt(20, 1), Prompt(40, 8)), to_context});
  cases.push_back({Prompt(7, 9), WithMtp(Sampled(16, 5), 6, false)});
  // The benchmarks' synthetic acceptance: accepted drafts are not verified, so its output
  // depends on the draft lengths, which must then never be shortened.
  GenerateParams synthetic = WithMtp(Greedy(20), 7, false);
  synthetic.synthetic_acceptance = {0.9f, 0.6f};
  synthetic.sampling.seed = 42;  // the acceptance draws use the seed even when greedy
  cases.push_back({Prompt(10, 10), synthetic});
  // Draft-model speculation, in the same steps as MTP: greedy fixed and adaptive (one sharing a
  // prefix with request 0), and sampled with a fixed length.
  cases.push_back({Prompt(18, 11), WithDraftModel(Greedy(24), 4, false)});
  cases.push_back({Prompt(22, 12), WithDraftModel(Sampled(20, 13), 3, false)});
  cases.push_back({Concat(Prompt(20, 1), Prompt(6, 13)), WithDraftModel(Greedy(20), 6, true)});
  return cases;
}

struct Layout {
  int n_slots;
  int max_batch;
  int prefill_chunk;
};

class EngineInvariance : public testing::TestWithParam<Layout> {};

TEST_P(EngineInvariance, EveryRequestGetsItsAloneTokensAndMetricsAddUp) {
  const Layout layout = GetParam();
  EngineOptions options;
  options.n_slots = layout.n_slots;
  options.kv = {.type = TensorType::kF16, .n_ctx = 128, .n_seq = 1, .max_batch = layout.max_batch};
  options.prefill_chunk = layout.prefill_chunk;
  const std::vector<Case> cases = MixedCases(options.kv);
  std::vector<GenerateResult> want;
  for (const Case& c : cases) want.push_back(RunAlone(c.prompt, c.params, options.kv));

  ThreadPool pool(2);
  Recorder rec(static_cast<int>(cases.size()));
  {
    Engine engine(
        *Models().target,
        MakeDrafters({*Models().target, Models().assistant.get(), Models().draft.get(), pool}),
        pool, options);
    for (size_t i = 0; i < cases.size(); ++i) {
      engine.Submit({cases[i].prompt, cases[i].params, rec.Callback(static_cast<int>(i))});
    }
    rec.WaitFinals(static_cast<int>(cases.size()));

    int64_t prompt_tokens = 0, cached = 0, generated = 0, drafted = 0, accepted = 0;
    for (size_t i = 0; i < cases.size(); ++i) {
      SCOPED_TRACE("request " + std::to_string(i));
      const Outcome o = rec.Get(static_cast<int>(i));
      EXPECT_EQ(o.error, "");
      EXPECT_EQ(o.finals, 1);
      EXPECT_EQ(o.events_after_final, 0);
      EXPECT_EQ(o.result.tokens, want[i].tokens);
      EXPECT_EQ(o.event_tokens, o.result.tokens);
      EXPECT_EQ(o.result.stop_reason, want[i].stop_reason);
      EXPECT_EQ(o.result.prompt_tokens, static_cast<int>(cases[i].prompt.size()));
      const GenerateParams& p = cases[i].params;
      if (p.spec.type != SpecType::kNone && !p.spec.adaptive && !p.sampling.greedy()) {
        // A sampled request with fixed draft lengths gets exactly those lengths (greedy ones
        // may be shortened to fit the batch: that cannot change their tokens) and the same
        // draws, so even its statistics agree.
        EXPECT_GT(o.result.spec.drafted, 0);
        EXPECT_EQ(o.result.spec.drafted, want[i].spec.drafted);
        EXPECT_EQ(o.result.spec.accepted, want[i].spec.accepted);
      }
      prompt_tokens += o.result.prompt_tokens;
      cached += o.result.cached_prompt_tokens;
      generated += static_cast<int64_t>(o.result.tokens.size());
      drafted += o.result.spec.drafted;
      accepted += o.result.spec.accepted;
    }
    EXPECT_EQ(want[6].stop_reason, StopReason::kEog);
    EXPECT_EQ(want[7].stop_reason, StopReason::kContext);

    const EngineMetrics m = engine.Metrics();
    EXPECT_EQ(m.requests_started, static_cast<int64_t>(cases.size()));
    EXPECT_EQ(m.requests_finished, static_cast<int64_t>(cases.size()));
    EXPECT_EQ(m.requests_cancelled + m.requests_failed + m.requests_rejected, 0);
    EXPECT_EQ(m.prompt_tokens, prompt_tokens);
    EXPECT_EQ(m.cached_prompt_tokens, cached);
    EXPECT_EQ(m.generated_tokens, generated);
    EXPECT_EQ(m.spec.generated, generated);
    EXPECT_EQ(m.spec.drafted, drafted);
    EXPECT_EQ(m.spec.accepted, accepted);
    EXPECT_GT(m.spec.drafted, 0);
    ASSERT_EQ(m.slots.size(), static_cast<size_t>(layout.n_slots));
    int64_t slot_requests = 0, slot_drafted = 0, slot_accepted = 0;
    for (const SlotMetrics& s : m.slots) {
      EXPECT_FALSE(s.busy);
      slot_requests += s.requests;
      slot_drafted += s.spec.drafted;
      slot_accepted += s.spec.accepted;
    }
    EXPECT_EQ(slot_requests, static_cast<int64_t>(cases.size()));
    EXPECT_EQ(slot_drafted, drafted);
    EXPECT_EQ(slot_accepted, accepted);
    EXPECT_EQ(m.queue_depth, 0);
    EXPECT_EQ(m.busy_slots, 0);
    EXPECT_EQ(m.n_slots, layout.n_slots);
    EXPECT_EQ(m.kv_capacity_positions, 128 * layout.n_slots);
    EXPECT_GT(m.kv_bytes, 0u);
    EXPECT_GT(m.kv_used_positions, 0);  // idle slots keep their prompt cache
    EXPECT_LE(m.kv_used_positions, m.kv_capacity_positions);
    EXPECT_GT(m.generate_seconds, 0.0);
  }
}

// max_batch 12 with drafts of up to 8 forces shortened drafts and deferred slots; a prefill chunk
// larger than the batch is clipped to it.
INSTANTIATE_TEST_SUITE_P(Slots, EngineInvariance,
                         testing::Values(Layout{1, 64, 8}, Layout{2, 16, 16}, Layout{3, 12, 5},
                                         Layout{3, 64, 64}),
                         [](const testing::TestParamInfo<Layout>& info) {
                           return std::to_string(info.param.n_slots) + "slots_batch" +
                                  std::to_string(info.param.max_batch) + "_chunk" +
                                  std::to_string(info.param.prefill_chunk);
                         });

TEST(EngineSuppressTokens, SuppressedIdsAreNeverSampledPlainOrSpeculative) {
  // The same random pair as Models(), written again with tokenizer.ggml.suppress_tokens naming
  // the first tokens plain greedy decoding emits without the key.
  const KvCacheOptions kv{.type = TensorType::kF16, .n_ctx = 128};
  const std::vector<int32_t> prompt = Prompt(12, 3);
  const std::vector<int32_t> free_run = RunAlone(prompt, Greedy(16), kv).tokens;
  std::vector<int32_t> banned(free_run.begin(), free_run.begin() + 3);
  const std::string dir = testing::TempDir() + "suppress_" + std::to_string(getpid()) + "_";
  RandomModelOptions options;
  options.weight_type = TensorType::kQ8_0;
  WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, dir + "raw.gguf");
  WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", true), options, dir + "asst.gguf");
  {
    const auto raw = GgufFile::Open(dir + "raw.gguf");
    GgufWriter w;
    w.CopyMetadata(raw->metadata());
    for (const TensorInfo& t : raw->tensors()) w.AddTensorFrom(*raw, t);
    AddSuppressTokensToGguf(banned, w);
    w.Write(dir + "target.gguf");
  }
  auto target = Gemma4Model::Load(dir + "target.gguf");
  auto assistant = Gemma4Assistant::Load(dir + "asst.gguf", *target);
  ThreadPool pool(1);
  Generator plain(*target, {}, pool, kv);
  Generator spec(*target, MakeDrafters({*target, assistant.get(), target.get(), pool}), pool, kv);
  auto none_banned = [&](const std::vector<int32_t>& tokens) {
    for (int32_t t : tokens) {
      if (std::find(banned.begin(), banned.end(), t) != banned.end()) return false;
    }
    return true;
  };
  const std::vector<int32_t> want = plain.Generate(prompt, Greedy(16), nullptr).tokens;
  EXPECT_NE(want, free_run);
  EXPECT_TRUE(none_banned(want));
  GenerateResult mtp = spec.Generate(prompt, WithMtp(Greedy(16), 4, false), nullptr);
  EXPECT_EQ(mtp.tokens, want);
  EXPECT_GT(mtp.spec.drafted, 0);
  EXPECT_EQ(spec.Generate(prompt, WithDraftModel(Greedy(16), 3, false), nullptr).tokens, want);
  for (uint32_t seed = 0; seed < 8; ++seed) {
    EXPECT_TRUE(none_banned(plain.Generate(prompt, Sampled(16, seed, 1.5f), nullptr).tokens));
    EXPECT_TRUE(none_banned(
        spec.Generate(prompt, WithMtp(Sampled(16, seed, 1.5f), 3, false), nullptr).tokens));
  }
}

TEST(EngineDraftModel, ParallelSlotsMatchPlainGreedyDecoding) {
  // Lossless against plain decoding itself (not only against Generator): four slots drafting
  // with the draft model at once, each with another draft length.
  EngineOptions options;
  options.n_slots = 4;
  options.kv = {.type = TensorType::kF16, .n_ctx = 128, .n_seq = 1, .max_batch = 32};
  ThreadPool pool(2);
  Recorder rec(4);
  std::vector<std::vector<int32_t>> prompts;
  {
    Engine engine(*Models().target,
                  MakeDrafters({*Models().target, nullptr, Models().draft.get(), pool}), pool,
                  options);
    for (int i = 0; i < 4; ++i) {
      prompts.push_back(Prompt(10 + 3 * i, 20 + i));
      engine.Submit(
          {prompts[i], WithDraftModel(Greedy(30), 1 + 2 * i, i % 2 == 1), rec.Callback(i)});
    }
    rec.WaitFinals(4);
    const EngineMetrics m = engine.Metrics();
    EXPECT_GT(m.spec.drafted, 0);
    int drafting_slots = 0;
    for (const SlotMetrics& s : m.slots) drafting_slots += s.spec.drafted > 0 ? 1 : 0;
    EXPECT_EQ(drafting_slots, 4);
    // The choices by batch size account for every step of every slot, and the four slots
    // generated side by side.
    int64_t steps = 0, drafted = 0;
    for (const EngineMetrics::BatchChoices& c : m.spec_by_batch) {
      steps += c.drafting + c.plain;
      drafted += c.drafted_tokens;
    }
    EXPECT_EQ(steps, m.spec.rounds + m.spec.plain_steps);
    EXPECT_EQ(drafted, m.spec.drafted);
    ASSERT_GE(m.spec_by_batch.size(), 5u);
    EXPECT_GT(m.spec_by_batch[4].drafting, 0);
  }
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    const Outcome o = rec.Get(i);
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.result.tokens, RunAlone(prompts[i], Greedy(30), options.kv).tokens);
    EXPECT_GT(o.result.spec.drafted, 0);
  }
}

TEST(EngineMtp, AGreedyRequestStartsFromWhatTheSlotsLastOneMeasured) {
  // The random assistant's drafts are almost never accepted and its step is dear next to the
  // tiny target's: a request learns from the prior not to draft (it drafts its first round).
  // Greedy requests on a slot after one with the same options start from its estimates
  // (spec.continued) and do not pay that round again; requests whose options alternate
  // (another draft_max) start from the prior each time. Outputs stay those of plain runs. (How
  // many tokens each then drafts depends on the measured step times: the planner's own tests
  // simulate those, DraftLengthController.AStreamOfShortRequestsLearnsOnce...)
  EngineOptions options;
  options.n_slots = 1;
  options.kv = {.type = TensorType::kF16, .n_ctx = 128, .n_seq = 1, .max_batch = 32};
  ThreadPool pool(2);
  for (int alternate = 0; alternate < 2; ++alternate) {
    Engine engine(*Models().target,
                  MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                  options);
    for (int i = 0; i < 5; ++i) {
      Recorder rec(1);
      const int draft_max = alternate && i % 2 ? 7 : 8;
      engine.Submit({Prompt(12, 40 + i), WithMtp(Greedy(48), draft_max, true), rec.Callback(0)});
      rec.WaitFinals(1);
      const Outcome o = rec.Get(0);
      EXPECT_EQ(o.error, "");
      EXPECT_EQ(o.result.tokens, RunAlone(Prompt(12, 40 + i), Greedy(48), options.kv).tokens);
      const bool from_prior = i == 0 || alternate;
      EXPECT_EQ(o.result.spec.continued, from_prior ? 0 : 1) << i;
      if (from_prior) {
        EXPECT_GE(o.result.spec.drafted, 1) << i;
      }
    }
    EXPECT_EQ(engine.Metrics().spec.continued, alternate ? 0 : 4);
  }
}

// Runs `first` then `second` through one engine, one after the other.
std::vector<Outcome> RunTwoTurns(
    Engine& engine, const std::vector<Case>& first,
    const std::function<std::vector<Case>(const std::vector<Outcome>&)>& second) {
  Recorder a(static_cast<int>(first.size()));
  for (size_t i = 0; i < first.size(); ++i) {
    engine.Submit({first[i].prompt, first[i].params, a.Callback(static_cast<int>(i))});
  }
  a.WaitFinals(static_cast<int>(first.size()));
  std::vector<Outcome> outcomes;
  for (size_t i = 0; i < first.size(); ++i) outcomes.push_back(a.Get(static_cast<int>(i)));
  const std::vector<Case> next = second(outcomes);
  Recorder b(static_cast<int>(next.size()));
  for (size_t i = 0; i < next.size(); ++i) {
    engine.Submit({next[i].prompt, next[i].params, b.Callback(static_cast<int>(i))});
  }
  b.WaitFinals(static_cast<int>(next.size()));
  for (size_t i = 0; i < next.size(); ++i) outcomes.push_back(b.Get(static_cast<int>(i)));
  return outcomes;
}

TEST(EnginePromptCache, FollowUpsReuseTheirConversationsSlotAndMatchUncachedRuns) {
  EngineOptions options;
  options.n_slots = 2;
  options.kv = {.type = TensorType::kF16, .n_ctx = 128, .n_seq = 1, .max_batch = 16};
  ThreadPool pool(2);
  Engine engine(*Models().target,
                MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                options);
  const std::vector<Case> first = {{Prompt(30, 10), Greedy(12)},
                                   {Prompt(26, 11), WithMtp(Sampled(12, 4), 3, false)}};
  std::vector<Case> second;
  const std::vector<Outcome> got = RunTwoTurns(engine, first, [&](const std::vector<Outcome>& o) {
    // Follow-ups in the other order, so reuse depends on picking the right slot.
    second = {{Concat(Concat(first[1].prompt, o[1].result.tokens), {5, 6, 7}),
               WithMtp(Greedy(12), 4, false)},
              {Concat(Concat(first[0].prompt, o[0].result.tokens), {8}), Sampled(12, 9)}};
    return second;
  });
  ASSERT_EQ(got.size(), 4u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(got[i].error, "");
    EXPECT_EQ(got[i].result.cached_prompt_tokens, 0);
  }
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE("follow-up " + std::to_string(i));
    const Outcome& o = got[2 + i];
    const Outcome& before = got[1 - i];
    EXPECT_EQ(o.error, "");
    // Everything the earlier turn committed but its last token is in the cache.
    EXPECT_EQ(o.result.cached_prompt_tokens,
              static_cast<int>(first[1 - i].prompt.size() + before.result.tokens.size()) - 1);
    EXPECT_EQ(o.result.tokens, RunAlone(second[i].prompt, second[i].params, options.kv).tokens);
  }
  EXPECT_EQ(engine.Metrics().cached_prompt_tokens,
            got[2].result.cached_prompt_tokens + got[3].result.cached_prompt_tokens);
}

TEST(EnginePromptCache, SlidingWindowsDecideWhatCanBeReused) {
  // max_batch 8: the sliding layers' rings hold 32 + 8 - 1 = 39 positions.
  EngineOptions options;
  options.n_slots = 1;
  options.kv = {.type = TensorType::kQ8_0, .n_ctx = 128, .n_seq = 1, .max_batch = 8};
  ThreadPool pool(2);
  Engine engine(*Models().target,
                MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                options);
  const std::vector<Case> first = {{Prompt(20, 12), WithMtp(Greedy(60), 3, false)}};
  std::vector<Case> second;
  std::vector<Outcome> got = RunTwoTurns(engine, first, [&](const std::vector<Outcome>& o) {
    // Sharing only 10 tokens: the ring overwrote the window position 10 needs -> full prefill.
    second = {{Concat(std::vector<int32_t>(first[0].prompt.begin(), first[0].prompt.begin() + 10),
                      Prompt(6, 13)),
               Greedy(10)}};
    (void)o;
    return second;
  });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].result.cached_prompt_tokens, 0);
  EXPECT_EQ(got[1].result.tokens, RunAlone(second[0].prompt, second[0].params, options.kv).tokens);

  const std::vector<int32_t> held = second[0].prompt;

  // Extending the whole conversation: the last window is intact -> reused.
  const std::vector<Case> again = {{Prompt(20, 12), WithMtp(Greedy(60), 3, false)}};
  got = RunTwoTurns(engine, again, [&](const std::vector<Outcome>& o) {
    second = {{Concat(Concat(again[0].prompt, o[0].result.tokens), {3, 4}), Sampled(10, 2)}};
    return second;
  });
  ASSERT_EQ(got.size(), 2u);
  // The slot held the 16-token request (26 positions, nothing overwritten): its shared prefix
  // with this prompt is reused.
  size_t common = 0;
  while (held[common] == again[0].prompt[common]) ++common;
  EXPECT_EQ(got[0].result.cached_prompt_tokens, static_cast<int>(common));
  EXPECT_EQ(got[0].result.tokens, RunAlone(again[0].prompt, again[0].params, options.kv).tokens);
  EXPECT_EQ(got[1].result.cached_prompt_tokens, 20 + 60 - 1);
  EXPECT_EQ(got[1].result.tokens, RunAlone(second[0].prompt, second[0].params, options.kv).tokens);
}

}  // namespace
}  // namespace tandem
