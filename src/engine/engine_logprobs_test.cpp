// Logprobs are a function of the emitted position's logits row only, so they are bitwise the
// same with and without speculation (MTP, chain, draft model), in any slot and batch; they are
// the raw model distribution (a grammar or bias changes the token, never its row's logprobs).
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <mutex>

#include "engine/engine_test_util.h"

namespace tandem {
namespace {

using testing_engine::Greedy;
using testing_engine::Models;
using testing_engine::Prompt;
using testing_engine::WithDraftModel;
using testing_engine::WithMtp;

struct Logged {
  std::vector<int32_t> tokens;
  std::vector<TokenLogprobs> logprobs;
  int missing = 0;  // token events without logprobs
  int64_t drafted = 0;
  bool done = false;
};

TEST(EngineLogprobs, BitwiseIdenticalPlainAndSpeculativeInEverySlot) {
  const std::vector<int32_t> prompt = Prompt(20, 4);
  std::vector<GenerateParams> variants = {Greedy(24), WithMtp(Greedy(24), 3, false),
                                          WithMtp(Greedy(24), 6, true),
                                          WithDraftModel(Greedy(24), 4, false)};
  GenerateParams chain = WithMtp(Greedy(24), 5, false);
  chain.spec.type = SpecType::kChain;
  chain.spec.ngram_min = 1;
  variants.push_back(chain);
  for (GenerateParams& p : variants) p.top_logprobs = 5;
  GenerateParams off = Greedy(24);  // logprobs not asked: none are sent

  EngineOptions options;
  options.n_slots = 3;
  options.kv = {.type = TensorType::kF16, .n_ctx = 128, .n_seq = 1, .max_batch = 64};
  ThreadPool pool(2);
  // Each variant twice: alone-ish first, then with the others in flight in other slots.
  const int n = static_cast<int>(variants.size());
  std::vector<Logged> logged(2 * n + 1);
  std::mutex mutex;
  std::condition_variable cv;
  int finals = 0;
  const auto callback = [&](int i) {
    return [&, i](const EngineEvent& e) {
      std::lock_guard<std::mutex> lock(mutex);
      if (e.final) {
        logged[i].done = true;
        if (e.result != nullptr) logged[i].drafted = e.result->spec.drafted;
        ++finals;
        cv.notify_all();
        return true;
      }
      logged[i].tokens.push_back(e.token);
      if (e.logprobs == nullptr) {
        ++logged[i].missing;
      } else {
        logged[i].logprobs.push_back(*e.logprobs);
      }
      return true;
    };
  };
  {
    Engine engine(
        *Models().target,
        MakeDrafters({*Models().target, Models().assistant.get(), Models().draft.get(), pool}),
        pool, options);
    for (int i = 0; i < n; ++i) engine.Submit({prompt, variants[i], callback(i)});
    // Other prompts share the batch with the second round of the same requests.
    for (int i = 0; i < n; ++i) engine.Submit({prompt, variants[i], callback(n + i)});
    engine.Submit({Prompt(33, 9), off, callback(2 * n)});
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return finals == 2 * n + 1; }));
  }
  EXPECT_EQ(logged[2 * n].missing, static_cast<int>(logged[2 * n].tokens.size()));
  const Logged& want = logged[0];
  ASSERT_EQ(want.logprobs.size(), want.tokens.size());
  for (size_t t = 0; t < want.tokens.size(); ++t) {
    const TokenLogprobs& lp = want.logprobs[t];
    // Greedy: the emitted token is the argmax, the first of the sorted top list.
    EXPECT_EQ(lp.chosen.token, want.tokens[t]);
    ASSERT_EQ(lp.top.size(), 5u);
    EXPECT_EQ(lp.top[0].token, want.tokens[t]);
    EXPECT_EQ(lp.top[0].logprob, lp.chosen.logprob);
    double mass = 0;
    for (size_t r = 0; r < lp.top.size(); ++r) {
      EXPECT_LE(lp.top[r].logprob, 0.0f);
      if (r > 0) {
        EXPECT_LE(lp.top[r].logprob, lp.top[r - 1].logprob);
      }
      mass += std::exp(static_cast<double>(lp.top[r].logprob));
    }
    EXPECT_LE(mass, 1.0 + 1e-6);
  }
  for (int i = 1; i < 2 * n; ++i) {
    SCOPED_TRACE("request " + std::to_string(i));
    const Logged& got = logged[i];
    EXPECT_EQ(got.missing, 0);
    if (i % n != 0) {
      EXPECT_GT(got.drafted, 0);  // speculation ran
    }
    ASSERT_EQ(got.tokens, want.tokens);
    ASSERT_EQ(got.logprobs.size(), want.logprobs.size());
    for (size_t t = 0; t < got.logprobs.size(); ++t) {
      // Exact float equality, not a tolerance: the rows are bitwise the same.
      EXPECT_EQ(got.logprobs[t].chosen.logprob, want.logprobs[t].chosen.logprob) << t;
      ASSERT_EQ(got.logprobs[t].top.size(), want.logprobs[t].top.size());
      for (size_t r = 0; r < got.logprobs[t].top.size(); ++r) {
        EXPECT_EQ(got.logprobs[t].top[r].token, want.logprobs[t].top[r].token);
        EXPECT_EQ(got.logprobs[t].top[r].logprob, want.logprobs[t].top[r].logprob);
      }
    }
  }
}

}  // namespace
}  // namespace tandem
