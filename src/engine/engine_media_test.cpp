// Prompts with media rows (EngineRequest::media): the rows enter the forward as embeddings,
// speculation after them (images and audio) stays lossless for every drafter, the prompt cache
// knows them by their key, and an image attended both ways is never split across forwards.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>

#include "base/error.h"
#include "engine/engine_test_util.h"
#include "engine/prompt_media.h"

namespace tandem::testing_engine {
namespace {

std::shared_ptr<const std::vector<float>> SoftRows(int rows, int n_embd, int salt) {
  auto v = std::make_shared<std::vector<float>>(static_cast<size_t>(rows) * n_embd);
  for (size_t i = 0; i < v->size(); ++i) {
    (*v)[i] = std::sin(0.11f * static_cast<float>(i) + 0.7f * static_cast<float>(salt));
  }
  return v;
}

PromptMedia Image(int32_t begin, int32_t count, uint64_t key, int salt) {
  return {.begin = begin,
          .count = count,
          .key = key,
          .embeddings = SoftRows(count, Models().target->n_embd(), salt)};
}

GenerateResult GenerateWith(Generator& gen, const std::vector<int32_t>& prompt,
                            std::vector<PromptMedia> media, const GenerateParams& params) {
  return gen.Generate(prompt, std::move(media), params, nullptr);
}

Generator MakeGenerator(ThreadPool& pool, int max_batch = 64) {
  return Generator(
      *Models().target,
      MakeDrafters({*Models().target, Models().assistant.get(), Models().draft.get(), pool}), pool,
      {.n_ctx = 256, .n_seq = 1, .max_batch = max_batch});
}

TEST(EngineMedia, RowsThatAreTokenZerosEmbeddingGenerateAsTokenZero) {
  ThreadPool pool(2);
  Generator gen = MakeGenerator(pool);
  std::vector<int32_t> prompt = Prompt(20, 3);
  auto e0 = std::make_shared<std::vector<float>>();
  for (int i = 5; i < 9; ++i) {
    prompt[i] = 0;
    std::vector<float> row(Models().target->n_embd());
    Models().target->EmbedToken(0, row.data());
    e0->insert(e0->end(), row.begin(), row.end());
  }
  const GenerateResult plain = GenerateWith(gen, prompt, {}, Greedy(24));
  gen.Reset();
  const GenerateResult media =
      GenerateWith(gen, prompt, {{.begin = 5, .count = 4, .key = 7, .embeddings = e0}}, Greedy(24));
  EXPECT_EQ(plain.tokens, media.tokens);
}

PromptMedia Audio(int32_t begin, int32_t count, uint64_t key, int salt) {
  PromptMedia m = Image(begin, count, key, salt);
  m.audio = true;
  return m;
}

TEST(EngineMedia, GreedySpeculationAfterAnImageAndAudioIsLosslessForEveryDrafter) {
  ThreadPool pool(2);
  Generator gen = MakeGenerator(pool);
  const std::vector<int32_t> prompt = Prompt(40, 5);
  const std::vector<PromptMedia> media = {Image(4, 9, 11, 1), Audio(20, 9, 12, 2)};
  const GenerateResult plain = GenerateWith(gen, prompt, media, Greedy(48));
  ASSERT_EQ(plain.tokens.size(), 48u);
  for (const SpecType type :
       {SpecType::kMtp, SpecType::kDraft, SpecType::kChain, SpecType::kNgram}) {
    gen.Reset();
    GenerateParams params = WithMtp(Greedy(48), 4, false);
    params.spec.type = type;
    const GenerateResult spec = GenerateWith(gen, prompt, media, params);
    EXPECT_EQ(spec.tokens, plain.tokens) << SpecTypeName(type);
    if (type == SpecType::kMtp || type == SpecType::kDraft) {
      EXPECT_GT(spec.spec.drafted, 0) << SpecTypeName(type);
    }
  }
  // The media rows change the output: they are not ignored.
  gen.Reset();
  const std::vector<PromptMedia> other = {Image(4, 9, 11, 3), Audio(20, 9, 12, 2)};
  EXPECT_NE(GenerateWith(gen, prompt, other, Greedy(48)).tokens, plain.tokens);
  gen.Reset();
  const std::vector<PromptMedia> other_audio = {Image(4, 9, 11, 1), Audio(20, 9, 12, 5)};
  EXPECT_NE(GenerateWith(gen, prompt, other_audio, Greedy(48)).tokens, plain.tokens);
  // The audio item's encode time is reported apart.
  gen.Reset();
  EXPECT_EQ(GenerateWith(gen, prompt, media, Greedy(2)).prompt_audio, 1);
}

TEST(EngineMedia, ThePromptCacheKnowsAnImageByItsKey) {
  ThreadPool pool(1);
  Generator gen = MakeGenerator(pool);
  const std::vector<int32_t> prompt = Prompt(30, 7);
  const GenerateResult first = GenerateWith(gen, prompt, {Image(6, 9, 21, 1)}, Greedy(4));
  // The same image again: everything but the last prompt token comes from the cache.
  const GenerateResult again = GenerateWith(gen, prompt, {Image(6, 9, 21, 1)}, Greedy(4));
  EXPECT_EQ(again.cached_prompt_tokens, 29);
  EXPECT_EQ(again.tokens, first.tokens);
  // Another image at the same place: the cache serves the text before it only.
  const GenerateResult other = GenerateWith(gen, prompt, {Image(6, 9, 22, 4)}, Greedy(4));
  EXPECT_EQ(other.cached_prompt_tokens, 6);
  gen.Reset();
  EXPECT_EQ(GenerateWith(gen, prompt, {Image(6, 9, 22, 4)}, Greedy(4)).tokens, other.tokens);
}

TEST(EngineMedia, BadMediaIsRefusedBeforeAnyWork) {
  ThreadPool pool(1);
  Generator gen = MakeGenerator(pool);
  const std::vector<int32_t> prompt = Prompt(12, 1);
  EXPECT_THROW(GenerateWith(gen, prompt, {Image(8, 9, 1, 1)}, Greedy(2)),
               Error);  // past the prompt
  EXPECT_THROW(GenerateWith(gen, prompt, {Image(2, 4, 1, 1), Image(4, 2, 2, 1)}, Greedy(2)), Error);
  PromptMedia short_rows = Image(2, 4, 1, 1);
  short_rows.count = 5;
  EXPECT_THROW(GenerateWith(gen, prompt, {short_rows}, Greedy(2)), Error);
}

TEST(EngineMedia, AnImageAttendedBothWaysIsNeverSplit) {
  const std::string path =
      testing::TempDir() + "engine_media_" + std::to_string(getpid()) + ".gguf";
  WriteRandomGemma4(Gemma4Preset("tiny-e2b"), {}, path);
  auto both = Gemma4Model::Load(path, {.media_attention = MediaAttention::kBidirectional});
  ThreadPool pool(2);
  const std::vector<int32_t> prompt = Prompt(24, 9);
  const auto rows = SoftRows(7, both->n_embd(), 5);
  const std::vector<PromptMedia> media = {{.begin = 5, .count = 7, .key = 3, .embeddings = rows}};
  // A batch of 8 rows would cut the image at 8; it is evaluated from 5 to 11 in one forward.
  Generator small(*both, DrafterSet{}, pool, {.n_ctx = 128, .n_seq = 1, .max_batch = 8});
  Generator whole(*both, DrafterSet{}, pool, {.n_ctx = 128, .n_seq = 1, .max_batch = 64});
  const GenerateResult a = small.Generate(prompt, media, Greedy(16), nullptr);
  const GenerateResult b = whole.Generate(prompt, media, Greedy(16), nullptr);
  EXPECT_EQ(a.tokens, b.tokens);
  // An image longer than a batch cannot be evaluated whole: refused.
  Generator tiny(*both, DrafterSet{}, pool, {.n_ctx = 128, .n_seq = 1, .max_batch = 4});
  EXPECT_THROW(tiny.Generate(prompt, media, Greedy(4), nullptr), Error);
}

// Rows made by a job in `pieces` steps (or a job that fails).
class CountingJob : public MediaJob {
 public:
  CountingJob(std::shared_ptr<const std::vector<float>> rows, int pieces, bool fail = false)
      : rows_(std::move(rows)), pieces_(pieces), fail_(fail) {}
  bool Step(ThreadPool&) override {
    ++steps;
    if (fail_) Fail(ErrorKind::kInvalidArgument, "the image would not encode");
    return steps >= pieces_;
  }
  std::shared_ptr<const std::vector<float>> Result() override { return rows_; }
  int steps = 0;

 private:
  std::shared_ptr<const std::vector<float>> rows_;
  int pieces_;
  bool fail_;
};

TEST(EngineMedia, AJobMakesTheRowsOnTheEngineThreadAndACacheHitNeverRunsIt) {
  ThreadPool pool(1);
  Generator gen = MakeGenerator(pool);
  const std::vector<int32_t> prompt = Prompt(30, 2);
  const PromptMedia image = Image(6, 9, 31, 1);
  const GenerateResult direct = GenerateWith(gen, prompt, {image}, Greedy(8));
  gen.Reset();
  auto job = std::make_shared<CountingJob>(image.embeddings, 3);
  PromptMedia deferred = image;
  deferred.embeddings = nullptr;
  deferred.job = job;
  const GenerateResult made = GenerateWith(gen, prompt, {deferred}, Greedy(8));
  EXPECT_EQ(made.tokens, direct.tokens);
  EXPECT_EQ(job->steps, 3);
  // The same image again: the prompt cache holds its rows, so its job never runs.
  auto again = std::make_shared<CountingJob>(image.embeddings, 3);
  deferred.job = again;
  EXPECT_EQ(GenerateWith(gen, prompt, {deferred}, Greedy(8)).tokens, direct.tokens);
  EXPECT_EQ(again->steps, 0);
  // A job that fails fails its request with the job's message.
  gen.Reset();
  deferred.key = 32;
  deferred.job = std::make_shared<CountingJob>(image.embeddings, 3, true);
  try {
    GenerateWith(gen, prompt, {deferred}, Greedy(8));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("would not encode"), std::string::npos) << e.what();
  }
}

// A job that notes, at each piece, how many tokens another request had by then.
class WatchingJob : public MediaJob {
 public:
  WatchingJob(std::shared_ptr<const std::vector<float>> rows, int pieces,
              const std::atomic<int>& watched)
      : rows_(std::move(rows)), pieces_(pieces), watched_(watched) {}
  bool Step(ThreadPool&) override {
    seen.push_back(watched_.load());
    return static_cast<int>(seen.size()) >= pieces_;
  }
  std::shared_ptr<const std::vector<float>> Result() override { return rows_; }
  std::vector<int> seen;

 private:
  std::shared_ptr<const std::vector<float>> rows_;
  int pieces_;
  const std::atomic<int>& watched_;
};

TEST(EngineMedia, AnEncodeDelaysOtherSlotsByOnePieceAtATime) {
  ThreadPool pool(1);
  EngineOptions options;
  options.n_slots = 2;
  options.kv = {.n_ctx = 256, .n_seq = 2, .max_batch = 64};
  Engine engine(*Models().target, DrafterSet{}, pool, options);
  testing_engine::Recorder rec(2);
  testing_engine::Gate started, submitted;
  std::atomic<int> a_tokens{0};
  const std::vector<int32_t> a_prompt = Prompt(12, 5);
  // A's first token holds the engine thread until B is queued, so that B's encode starts while
  // A still has most of its tokens to go, however slowly this thread runs.
  engine.Submit({a_prompt, Greedy(60), rec.Callback(0, [&](int, int n) {
                   a_tokens.store(n);
                   if (n == 1) {
                     started.Open();
                     submitted.Wait();
                   }
                   return true;
                 })});
  started.Wait();
  const std::vector<int32_t> b_prompt = Prompt(30, 2);
  const PromptMedia image = Image(6, 9, 41, 3);
  auto job = std::make_shared<WatchingJob>(image.embeddings, 6, a_tokens);
  PromptMedia deferred = image;
  deferred.embeddings = nullptr;
  deferred.job = job;
  engine.Submit({b_prompt, Greedy(8), rec.Callback(1), {deferred}});
  submitted.Open();
  rec.WaitFinals(2);
  // Every piece ran in its own engine step, each of which also decoded the other request.
  ASSERT_EQ(job->seen.size(), 6u);
  for (size_t i = 1; i < job->seen.size(); ++i) {
    EXPECT_GT(job->seen[i], job->seen[i - 1]) << "piece " << i;
  }
  EXPECT_LT(job->seen.back(), 60) << "the encode ran after the other request had finished";
  EXPECT_EQ(rec.Get(0).result.tokens,
            RunAlone(a_prompt, Greedy(60), {.n_ctx = 256, .n_seq = 1, .max_batch = 64}).tokens);
  ThreadPool alone_pool(1);
  Generator alone = MakeGenerator(alone_pool);
  EXPECT_EQ(rec.Get(1).result.tokens, GenerateWith(alone, b_prompt, {image}, Greedy(8)).tokens);
}

}  // namespace
}  // namespace tandem::testing_engine
