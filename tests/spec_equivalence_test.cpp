// Speculative decoding is lossless: greedy output with MTP drafting is byte-identical to plain
// greedy decoding for every draft length, thread count and KV type, through Generator and through
// the multi-slot engine, and on the llama.cpp-written pair it reproduces llama.cpp's own
// draft-mtp run token for token.
#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "greedy_params.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "speculative/loaded_drafters.h"

namespace tandem {
namespace {

const std::string kFixtureDir = std::string(TANDEM_SHARED_DIR) + "/fixtures/llamacpp-tiny/";

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(SpecEquivalence, LlamaCppDraftMtpRunIsReproduced) {
  if (!std::filesystem::exists(kFixtureDir)) GTEST_SKIP() << "fixture absent: " << kFixtureDir;
  auto target = Gemma4Model::Load(kFixtureDir + "tiny-gemma4-f32.gguf");
  auto assistant = Gemma4Assistant::Load(kFixtureDir + "tiny-gemma4-assistant-f32.gguf", *target);
  auto prompts = ReadJson(kFixtureDir + "prompts.json")["prompts"];
  auto expected = ReadJson(kFixtureDir + "greedy-mtp-n3.json")["results"];
  ThreadPool pool(1);
  for (size_t i = 0; i < prompts.size(); ++i) {
    Generator gen(*target, MakeDrafters({*target, assistant.get(), nullptr, pool}), pool,
                  {.type = TensorType::kF32, .n_ctx = 256});
    std::vector<int32_t> prompt = prompts[i]["token_ids"].get<std::vector<int32_t>>();
    GenerateResult r = gen.Generate(prompt, Greedy(64, SpecType::kMtp, 3, false), nullptr);
    EXPECT_EQ(r.tokens, expected[i]["token_ids"].get<std::vector<int32_t>>()) << "prompt " << i;
    EXPECT_EQ(r.spec.drafted, expected[i]["draft_n"].get<int64_t>()) << "prompt " << i;
    EXPECT_EQ(r.spec.accepted, expected[i]["draft_n_accepted"].get<int64_t>()) << "prompt " << i;
  }
}

struct Pair {
  std::unique_ptr<Gemma4Model> target;
  std::unique_ptr<Gemma4Assistant> assistant;
};

Pair MakePair(const std::string& config, bool centroids, TensorType type) {
  // Unique per test: ctest runs the cases of this binary in parallel processes.
  const std::string dir =
      testing::TempDir() + testing::UnitTest::GetInstance()->current_test_info()->name() + "_";
  const std::string t = dir + "spec_" + config + ".gguf", a = dir + "spec_" + config + "_asst.gguf";
  RandomModelOptions options;
  options.weight_type = type;
  WriteRandomGemma4(Gemma4Preset(config), options, t);
  WriteRandomGemma4Assistant(Gemma4AssistantPreset(config, centroids), options, a);
  Pair p;
  p.target = Gemma4Model::Load(t);
  p.assistant = Gemma4Assistant::Load(a, *p.target);
  return p;
}

// The server's caller: every request submitted to `engine` at once (continuous batching, shared
// drafting steps), their results once all have ended.
std::vector<GenerateResult> ServeTogether(Engine& engine, const std::vector<int32_t>& prompt,
                                          const std::vector<GenerateParams>& requests) {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<GenerateResult> got(requests.size());
  size_t finals = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    engine.Submit({prompt, requests[i], [&, i](const EngineEvent& e) {
                     if (!e.final) return true;
                     std::lock_guard<std::mutex> lock(mu);
                     got[i] = *e.result;
                     if (++finals == requests.size()) cv.notify_one();
                     return true;
                   }});
  }
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return finals == requests.size(); });
  return got;
}

// The engine tests' setting: plain greedy decoding alone on one thread, and an engine of
// `n_slots` slots on two threads with the pair's drafters (`draft_model`: the draft-model
// drafter's model, or null), both on an f16 cache of 256 positions; the engine prefills in chunks
// of 8 and batches up to 24 rows.
struct EngineBeside {
  static constexpr KvCacheOptions kKv{.type = TensorType::kF16, .n_ctx = 256, .max_batch = 24};
  static EngineOptions Options(int n_slots) {
    EngineOptions options;
    options.n_slots = n_slots;
    options.kv = kKv;
    options.prefill_chunk = 8;
    return options;
  }
  EngineBeside(const Pair& pair, int n_slots, const Gemma4Model* draft_model)
      : plain(*pair.target, {}, plain_pool, kKv),
        engine(*pair.target, MakeDrafters({*pair.target, pair.assistant.get(), draft_model, pool}),
               pool, Options(n_slots)) {}
  std::vector<int32_t> PlainGreedy(const std::vector<int32_t>& prompt, int n) {
    return plain.Generate(prompt, Greedy(n, SpecType::kNone, 0, false), nullptr).tokens;
  }

  ThreadPool plain_pool{1}, pool{2};
  Generator plain;
  Engine engine;
};

TEST(SpecEquivalence, GreedyOutputIsIdenticalForEveryDraftLengthThreadsAndKvType) {
  Pair pair = MakePair("tiny-e2b", true, TensorType::kQ8_0);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 20; ++i) prompt.push_back(2 + (i * 31) % 500);
  const int n = 80;  // runs far past the 32-token sliding window
  for (TensorType kv : {TensorType::kF16, TensorType::kQ8_0, TensorType::kF32}) {
    ThreadPool pool1(1);
    Generator plain(*pair.target, {}, pool1, {.type = kv, .n_ctx = 256});
    const std::vector<int32_t> want =
        plain.Generate(prompt, Greedy(n, SpecType::kNone, 0, false), nullptr).tokens;
    ASSERT_EQ(static_cast<int>(want.size()), n);
    ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
    for (int draft_max = 1; draft_max <= 16; ++draft_max) {
      const int threads = 1 + draft_max % 3;
      Generator gen(*pair.target,
                    MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pools[threads - 1]}),
                    pools[threads - 1], {.type = kv, .n_ctx = 256});
      GenerateResult r = gen.Generate(prompt, Greedy(n, SpecType::kMtp, draft_max, false), nullptr);
      ASSERT_EQ(r.tokens, want) << "draft_max " << draft_max << ", threads " << threads << ", kv "
                                << TensorTypeName(kv);
      EXPECT_GT(r.spec.drafted, 0);
    }
  }
}

TEST(SpecEquivalence, GreedyThroughTheEngineIsIdenticalForEveryDraftLength) {
  // The server's caller: concurrent requests in a 4-slot engine (continuous batching, shared
  // drafting steps), MTP and draft-model drafting (the target drafting for itself) at every
  // draft length, fixed and adaptive, each equal to plain greedy decoding alone.
  Pair pair = MakePair("tiny-e2b", true, TensorType::kQ8_0);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 20; ++i) prompt.push_back(2 + (i * 31) % 500);
  const int n = 60;
  EngineBeside run(pair, 4, pair.target.get());
  const std::vector<int32_t> want = run.PlainGreedy(prompt, n);
  std::vector<GenerateParams> requests;
  for (int draft_max = 1; draft_max <= 8; ++draft_max) {
    requests.push_back(Greedy(n, SpecType::kMtp, draft_max, draft_max % 3 == 0));
    requests.push_back(Greedy(n, SpecType::kDraft, draft_max, draft_max % 3 == 1));
  }
  const std::vector<GenerateResult> got = ServeTogether(run.engine, prompt, requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    const SpecOptions& so = requests[i].spec;
    EXPECT_EQ(got[i].tokens, want) << SpecTypeName(so.type) << " draft_max " << so.draft_max
                                   << (so.adaptive ? " adaptive" : "");
    EXPECT_GT(got[i].spec.drafted, 0);
  }
}

// Draft trees (docs/mtp.md § Draft trees): every width and trunk length, fixed and adaptive,
// through Generator (threads, KV types) and through a 4-slot engine beside chain requests.
TEST(SpecEquivalence, DraftTreeGreedyIsIdenticalThroughGeneratorAndEngine) {
  Pair pair = MakePair("tiny-e2b", true, TensorType::kQ8_0);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 20; ++i) prompt.push_back(2 + (i * 31) % 500);
  const int n = 70;
  int64_t tree_rounds = 0;
  for (TensorType kv : {TensorType::kF16, TensorType::kQ8_0}) {
    ThreadPool pool1(1);
    Generator plain(*pair.target, {}, pool1, {.type = kv, .n_ctx = 256});
    const std::vector<int32_t> want =
        plain.Generate(prompt, Greedy(n, SpecType::kNone, 0, false), nullptr).tokens;
    ThreadPool pools[] = {ThreadPool(1), ThreadPool(2), ThreadPool(3)};
    for (int width = 2; width <= kMaxTreeWidth; ++width) {
      for (int draft_max = 1; draft_max <= 8; draft_max += 3) {
        const int threads = 1 + (draft_max + width) % 3;
        Generator gen(
            *pair.target,
            MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pools[threads - 1]}),
            pools[threads - 1], {.type = kv, .n_ctx = 256});
        GenerateParams params = Greedy(n, SpecType::kMtp, draft_max, width == 3);
        params.spec.tree_width = width;
        GenerateResult r = gen.Generate(prompt, params, nullptr);
        ASSERT_EQ(r.tokens, want) << "width " << width << ", draft_max " << draft_max
                                  << ", threads " << threads << ", kv " << TensorTypeName(kv);
        tree_rounds += r.spec.tree_rounds;
      }
    }
  }
  EXPECT_GT(tree_rounds, 50) << "trees must be drafted";

  EngineBeside run(pair, 4, nullptr);
  const std::vector<int32_t> want = run.PlainGreedy(prompt, n);
  std::vector<GenerateParams> requests;
  for (int draft_max = 1; draft_max <= 8; ++draft_max) {
    requests.push_back(Greedy(n, SpecType::kMtp, draft_max, draft_max % 2 == 0));
    requests.back().spec.tree_width = 2 + draft_max % 3;
    requests.push_back(Greedy(n, SpecType::kChain, draft_max, draft_max % 2 == 1));
  }
  const std::vector<GenerateResult> got = ServeTogether(run.engine, prompt, requests);
  int64_t engine_trees = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    const SpecOptions& so = requests[i].spec;
    EXPECT_EQ(got[i].tokens, want)
        << SpecTypeName(so.type) << " draft_max " << so.draft_max << " tree " << so.tree_width;
    engine_trees += got[i].spec.tree_rounds;
  }
  EXPECT_GT(engine_trees, 20) << "the engine's slots must draft trees";
  // /metrics' drafts by batch size are the drafts verified: the rows a tree reserved for
  // branches and left unused are not among them.
  const EngineMetrics m = run.engine.Metrics();
  int64_t by_batch = 0;
  for (const EngineMetrics::BatchChoices& c : m.spec_by_batch) by_batch += c.drafted_tokens;
  EXPECT_EQ(by_batch, m.spec.drafted);
}

TEST(SpecEquivalence, NgramAndChainGreedyAreIdenticalForLengthsTo64ThreadsAndKvTypes) {
  Pair pair = MakePair("tiny-e2b", true, TensorType::kQ8_0);
  // A prompt that repeats a block, so prompt lookup has something to propose from the start
  // (and random models loop, so generated text recurs too).
  std::vector<int32_t> prompt;
  for (int rep = 0; rep < 3; ++rep) {
    for (int i = 0; i < 12; ++i) prompt.push_back(2 + (i * 37) % 400);
  }
  const int n = 90;
  for (TensorType kv : {TensorType::kF16, TensorType::kQ8_0}) {
    ThreadPool pool1(1), pool2(2);
    Generator plain(*pair.target, {}, pool1, {.type = kv, .n_ctx = 256});
    const std::vector<int32_t> want =
        plain.Generate(prompt, Greedy(n, SpecType::kNone, 0, false), nullptr).tokens;
    int run = 0;
    for (SpecType type : {SpecType::kNgram, SpecType::kChain}) {
      for (int draft_max : {1, 5, 16, 64, 0}) {  // 0: adaptive with --draft-max 16
        ThreadPool& pool = ++run % 2 ? pool1 : pool2;
        Generator gen(*pair.target,
                      MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pool}), pool,
                      {.type = kv, .n_ctx = 256});
        GenerateParams p = Greedy(n, type, draft_max ? draft_max : 16, draft_max == 0);
        p.spec.ngram_min = 2;
        GenerateResult r = gen.Generate(prompt, p, nullptr);
        ASSERT_EQ(r.tokens, want) << SpecTypeName(type) << " draft_max " << draft_max << ", kv "
                                  << TensorTypeName(kv);
        if (draft_max == 0) continue;  // adaptive: what it drafts depends on measured times
        EXPECT_GT(r.spec.ngram.drafted, 0) << SpecTypeName(type) << " " << draft_max;
        if (type == SpecType::kNgram) {
          EXPECT_EQ(r.spec.model.drafted, 0);
        } else if (draft_max > 1) {
          EXPECT_GT(r.spec.model.drafted, 0);
        }
      }
    }
  }
}

// Three agent turns: the second prompt is the first with an edit near its start, the third the
// first again (a repeated request: suffix drafting proposes the first turn's whole output).
std::vector<std::vector<int32_t>> AgentTurns() {
  std::vector<int32_t> first;
  for (int i = 0; i < 20; ++i) first.push_back(2 + (i * 31) % 500);
  std::vector<int32_t> edited = first;
  edited[3] = 77;
  return {first, edited, first};
}

TEST(SpecEquivalence, SuffixGreedyIsIdenticalForLengthsThreadsAndKvTypes) {
  Pair pair = MakePair("tiny-e2b", true, TensorType::kQ8_0);
  const std::vector<std::vector<int32_t>> turns = AgentTurns();
  const int n = 70;
  for (TensorType kv : {TensorType::kF16, TensorType::kQ8_0}) {
    ThreadPool pool1(1), pool2(2);
    Generator plain(*pair.target, {}, pool1, {.type = kv, .n_ctx = 256});
    std::vector<std::vector<int32_t>> want;
    for (const auto& prompt : turns) {
      want.push_back(plain.Generate(prompt, Greedy(n, SpecType::kNone, 0, false), nullptr).tokens);
    }
    int run = 0;
    for (SpecType type : {SpecType::kSuffix, SpecType::kSuffixChain}) {
      for (int draft_max : {1, 5, 16, 64, 0}) {  // 0: adaptive with --draft-max 16
        ThreadPool& pool = ++run % 2 ? pool1 : pool2;
        // One generator per setting: its index starts empty and learns turn by turn.
        Generator gen(*pair.target,
                      MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pool}), pool,
                      {.type = kv, .n_ctx = 256});
        GenerateParams p = Greedy(n, type, draft_max ? draft_max : 16, draft_max == 0);
        GenerateResult last;
        for (size_t t = 0; t < turns.size(); ++t) {
          last = gen.Generate(turns[t], p, nullptr);
          ASSERT_EQ(last.tokens, want[t]) << SpecTypeName(type) << " draft_max " << draft_max
                                          << ", kv " << TensorTypeName(kv) << ", turn " << t;
          if (t == 0) {
            EXPECT_EQ(last.spec.suffix.drafted, 0);  // nothing learned yet
          }
        }
        if (draft_max == 0) continue;  // adaptive: what it drafts depends on measured times
        // The repeated turn drafts the first one's output from the index, and it is accepted.
        EXPECT_GT(last.spec.suffix.accepted, 0) << SpecTypeName(type) << " " << draft_max;
        if (type == SpecType::kSuffix) {
          EXPECT_EQ(last.spec.model.drafted, 0);
        }
      }
    }
  }
}

TEST(SpecEquivalence, SuffixGreedyThroughTheEngineIsIdenticalAndKeepsTenantsApart) {
  // Tenants "a" and "b" in a 3-slot engine: "a" runs the first turn, then "a" and "b" run the
  // repeated turn together with a plain request; each equals plain greedy decoding, "a" drafts
  // its earlier output, "b" (who never said it) drafts nothing from the index.
  Pair pair = MakePair("tiny-e2b", true, TensorType::kQ8_0);
  const std::vector<std::vector<int32_t>> turns = AgentTurns();
  const int n = 50;
  EngineBeside setting(pair, 3, nullptr);
  const std::vector<int32_t> want = setting.PlainGreedy(turns[0], n);
  auto run = [&](std::vector<std::pair<std::string, SpecType>> who) {
    std::vector<GenerateParams> requests;
    for (const auto& [tenant, type] : who) {
      requests.push_back(Greedy(n, type, 6, false));
      requests.back().tenant = tenant;
    }
    return ServeTogether(setting.engine, turns[0], requests);
  };
  const std::vector<GenerateResult> first = run({{"a", SpecType::kSuffixChain}});
  EXPECT_EQ(first[0].tokens, want);
  const std::vector<GenerateResult> second =
      run({{"a", SpecType::kSuffixChain}, {"b", SpecType::kSuffix}, {"a", SpecType::kNone}});
  for (const GenerateResult& r : second) EXPECT_EQ(r.tokens, want);
  EXPECT_GT(second[0].spec.suffix.accepted, 0);
  EXPECT_EQ(second[1].spec.suffix.drafted, 0);
  EXPECT_EQ(second[1].spec.drafted, 0);
}

TEST(SpecEquivalence, AdaptiveGreedyIsIdenticalToo) {
  Pair pair = MakePair("tiny-26b-a4b", false, TensorType::kQ4_0);
  std::vector<int32_t> prompt = {2, 300, 301, 302, 303, 304};
  ThreadPool pool(2);
  Generator plain(*pair.target, {}, pool, {.type = TensorType::kF16, .n_ctx = 256});
  Generator spec(*pair.target, MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pool}),
                 pool, {.type = TensorType::kF16, .n_ctx = 256});
  EXPECT_EQ(plain.Generate(prompt, Greedy(100, SpecType::kNone, 0, false), nullptr).tokens,
            spec.Generate(prompt, Greedy(100, SpecType::kMtp, 8, true), nullptr).tokens);
}

TEST(SpecEquivalence, SampledAdaptiveIsReproducibleFromTheSeed) {
  // Sampled output depends on the draft lengths; they come from acceptance and a static cost
  // model, never from measured times, so the seed alone fixes the output.
  Pair pair = MakePair("tiny-e2b", true, TensorType::kQ8_0);
  std::vector<int32_t> prompt = {2, 400, 401, 402};
  GenerateParams p = Greedy(60, SpecType::kMtp, 6, true);
  p.sampling.temperature = 0.9f;
  p.sampling.seed = 7;
  std::vector<int32_t> first;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    Generator gen(*pair.target, MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pool}),
                  pool, {.type = TensorType::kF16, .n_ctx = 256});
    std::vector<int32_t> tokens = gen.Generate(prompt, p, nullptr).tokens;
    if (first.empty()) first = tokens;
    EXPECT_EQ(tokens, first) << threads << " threads";
  }
}

TEST(SpecEquivalence, DraftModelGreedyIsIdentical) {
  const std::string dir = testing::TempDir();
  RandomModelOptions options;
  options.weight_type = TensorType::kQ8_0;
  WriteRandomGemma4(Gemma4Preset("tiny-31b"), options, dir + "dm_target.gguf");
  options.seed = 99;
  WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, dir + "dm_draft.gguf");
  auto target = Gemma4Model::Load(dir + "dm_target.gguf");
  auto draft = Gemma4Model::Load(dir + "dm_draft.gguf");
  std::vector<int32_t> prompt = {2, 300, 301, 302, 303};
  ThreadPool pool(2);
  Generator plain(*target, {}, pool, {.type = TensorType::kF16, .n_ctx = 256});
  const std::vector<int32_t> want =
      plain.Generate(prompt, Greedy(70, SpecType::kNone, 0, false), nullptr).tokens;
  for (int draft_max : {1, 3, 7}) {
    Generator gen(*target, MakeDrafters({*target, nullptr, draft.get(), pool}), pool,
                  {.type = TensorType::kF16, .n_ctx = 256});
    GenerateResult r =
        gen.Generate(prompt, Greedy(70, SpecType::kDraft, draft_max, false), nullptr);
    EXPECT_EQ(r.tokens, want) << "draft_max " << draft_max;
    EXPECT_GT(r.spec.drafted, 0);
  }
  // Drafting with the target itself is accepted every time.
  Generator self(*target, MakeDrafters({*target, nullptr, target.get(), pool}), pool,
                 {.type = TensorType::kF16, .n_ctx = 256});
  GenerateResult r = self.Generate(prompt, Greedy(40, SpecType::kDraft, 4, false), nullptr);
  EXPECT_EQ(r.spec.accepted, r.spec.drafted);
  EXPECT_EQ(std::vector<int32_t>(want.begin(), want.begin() + 40), r.tokens);
}

}  // namespace
}  // namespace tandem
