// Request control around the engine: cancellation (by id and by the client's callback), the
// queue limit, shutdown with queued and running requests, requests refused at Submit, and
// requests that fail mid-way without disturbing the others.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <thread>

#include "base/error.h"
#include "engine/engine_test_util.h"
#include "speculative/loaded_drafters.h"

namespace tandem {
namespace {

using testing_engine::Gate;
using testing_engine::Greedy;
using testing_engine::Models;
using testing_engine::Outcome;
using testing_engine::Prompt;
using testing_engine::Recorder;
using testing_engine::RunAlone;
using testing_engine::Sampled;
using testing_engine::WithMtp;

EngineOptions Options(int n_slots, int max_queue = 64) {
  EngineOptions options;
  options.n_slots = n_slots;
  options.max_queue = max_queue;
  options.kv = {.type = TensorType::kF16, .n_ctx = 128, .n_seq = 1, .max_batch = 32};
  return options;
}

// Submits and publishes the id, so a callback can wait for it.
struct IdBox {
  std::atomic<uint64_t> id{0};
  uint64_t Wait() const {
    while (id.load() == 0) std::this_thread::yield();
    return id.load();
  }
};

TEST(EngineControl, CancelStopsRequestsAndFreesTheirSlot) {
  const EngineOptions options = Options(1);
  ThreadPool pool(2);
  Engine engine(*Models().target,
                MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                options);
  Recorder rec(5);
  IdBox cancel_me, blocker_id;
  Gate gate;
  Gate blocker_started;

  // 0: cancelled by id after its third token (plain decoding: one token per step).
  cancel_me.id = engine.Submit({Prompt(10, 1), Greedy(100), rec.Callback(0, [&](int, int n) {
                                  if (n == 3) engine.Cancel(cancel_me.Wait());
                                  return true;
                                })});
  // 1: its client goes away at the fourth token.
  engine.Submit({Prompt(11, 2), WithMtp(Greedy(100), 3, false),
                 rec.Callback(1, [](int, int n) { return n < 4; })});
  rec.WaitFinals(2);
  // 2: blocks the only slot until the gate opens; 3 waits in the queue and is cancelled there.
  blocker_id.id = engine.Submit({Prompt(12, 3), Greedy(100), rec.Callback(2, [&](int, int) {
                                   blocker_started.Open();
                                   gate.Wait();
                                   return true;
                                 })});
  blocker_started.Wait();
  const uint64_t queued = engine.Submit({Prompt(13, 4), Greedy(5), rec.Callback(3)});
  engine.Cancel(queued);
  engine.Cancel(blocker_id.Wait());
  gate.Open();
  rec.WaitFinals(4);
  // 4: the slot works normally afterwards.
  const GenerateParams params = WithMtp(Sampled(20, 8), 4, false);
  engine.Submit({Prompt(14, 5), params, rec.Callback(4)});
  rec.WaitFinals(5);

  const Outcome by_id = rec.Get(0), by_client = rec.Get(1), blocker = rec.Get(2),
                in_queue = rec.Get(3), after = rec.Get(4);
  EXPECT_EQ(by_id.result.stop_reason, StopReason::kCancelled);
  EXPECT_EQ(by_id.result.tokens.size(), 3u);
  EXPECT_EQ(by_id.error, "");
  EXPECT_EQ(by_client.result.stop_reason, StopReason::kStopped);
  EXPECT_EQ(by_client.result.tokens.size(), 4u);
  EXPECT_EQ(blocker.result.stop_reason, StopReason::kCancelled);
  EXPECT_EQ(blocker.result.tokens.size(), 1u);
  EXPECT_EQ(in_queue.result.stop_reason, StopReason::kCancelled);
  EXPECT_TRUE(in_queue.result.tokens.empty());
  EXPECT_TRUE(in_queue.event_tokens.empty());
  for (const Outcome& o : {by_id, by_client, blocker, in_queue, after}) {
    EXPECT_EQ(o.finals, 1);
    EXPECT_EQ(o.events_after_final, 0);
    EXPECT_EQ(o.event_tokens, o.result.tokens);
  }
  // The cancelled requests' tokens are the prefix of what they would have generated.
  const std::vector<int32_t> full = RunAlone(Prompt(10, 1), Greedy(100), options.kv).tokens;
  EXPECT_TRUE(std::equal(by_id.result.tokens.begin(), by_id.result.tokens.end(), full.begin()));
  EXPECT_EQ(after.error, "");
  EXPECT_EQ(after.result.tokens, RunAlone(Prompt(14, 5), params, options.kv).tokens);

  const EngineMetrics m = engine.Metrics();
  EXPECT_EQ(m.requests_started, 5);
  EXPECT_EQ(m.requests_cancelled, 4);
  EXPECT_EQ(m.requests_finished, 1);
  EXPECT_EQ(m.busy_slots, 0);
  EXPECT_EQ(m.queue_depth, 0);
  EXPECT_EQ(m.generated_tokens, static_cast<int64_t>(3 + 4 + 1 + after.result.tokens.size()));
}

TEST(EngineControl, FullQueueRejectsAndRecovers) {
  ThreadPool pool(2);
  Engine engine(*Models().target, {}, pool, Options(1, 1));
  Recorder rec(3);
  Gate gate, started;
  engine.Submit({Prompt(10, 6), Greedy(5), rec.Callback(0, [&](int, int) {
                   started.Open();
                   gate.Wait();
                   return true;
                 })});
  started.Wait();
  engine.Submit({Prompt(10, 7), Greedy(5), rec.Callback(1)});  // waits in the queue
  try {
    engine.Submit({Prompt(10, 8), Greedy(5), nullptr});
    ADD_FAILURE() << "a full queue accepted a request";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnavailable);
    EXPECT_NE(std::string(e.what()).find("queue full"), std::string::npos) << e.what();
  }
  EXPECT_EQ(engine.Metrics().requests_rejected, 1);
  EXPECT_EQ(engine.Metrics().queue_depth, 1);
  EXPECT_EQ(engine.Metrics().busy_slots, 1);
  gate.Open();
  rec.WaitFinals(2);
  engine.Submit({Prompt(10, 8), Greedy(5), rec.Callback(2)});
  rec.WaitFinals(3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(rec.Get(i).error, "");
    EXPECT_EQ(rec.Get(i).result.tokens.size(), 5u);
  }
  EXPECT_EQ(engine.Metrics().requests_finished, 3);
}

TEST(EngineControl, ShutdownFinishesRunningAndRefusesQueued) {
  const EngineOptions options = Options(1);
  ThreadPool pool(2);
  Engine engine(*Models().target,
                MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                options);
  Recorder rec(3);
  Gate gate, started;
  const GenerateParams params = WithMtp(Greedy(20), 3, true);
  engine.Submit({Prompt(15, 9), params, rec.Callback(0, [&](int, int n) {
                   if (n == 1) {
                     started.Open();
                     gate.Wait();
                   }
                   if (n == 2) engine.Shutdown(true);  // from the engine thread: does not join
                   return true;
                 })});
  started.Wait();
  engine.Submit({Prompt(16, 10), Greedy(5), rec.Callback(1)});
  engine.Submit({Prompt(17, 11), Greedy(5), rec.Callback(2)});
  gate.Open();
  rec.WaitFinals(3);
  engine.Shutdown(true);
  EXPECT_THROW(engine.Submit({Prompt(5, 1), Greedy(5), nullptr}), Error);

  const Outcome running = rec.Get(0);
  EXPECT_EQ(running.error, "");
  EXPECT_EQ(running.result.tokens, RunAlone(Prompt(15, 9), params, options.kv).tokens);
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(rec.Get(i).error, "shutting down");
    EXPECT_EQ(rec.Get(i).finals, 1);
    EXPECT_TRUE(rec.Get(i).result.tokens.empty());
  }
  const EngineMetrics m = engine.Metrics();
  EXPECT_EQ(m.requests_finished, 1);
  EXPECT_EQ(m.requests_cancelled, 2);
  EXPECT_EQ(m.requests_rejected, 1);
}

TEST(EngineControl, DestroyingTheEngineCancelsRunningRequests) {
  auto rec = std::make_shared<Recorder>(1);
  Gate started;
  {
    ThreadPool pool(2);
    Engine engine(*Models().target,
                  MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                  Options(1));
    engine.Submit({Prompt(10, 12), WithMtp(Greedy(110), 4, true), rec->Callback(0, [&](int, int) {
                     started.Open();
                     return true;
                   })});
    started.Wait();
  }
  const Outcome o = rec->Get(0);
  EXPECT_EQ(o.finals, 1);
  EXPECT_EQ(o.error, "shutting down");
  EXPECT_EQ(o.result.stop_reason, StopReason::kCancelled);
  EXPECT_LT(o.result.tokens.size(), 110u);
}

TEST(EngineControl, SubmitRefusesRequestsThatCanNeverRun) {
  ThreadPool pool(1), other_pool(1);  // one pool per engine: a pool serves one thread
  Engine with_mtp(*Models().target,
                  MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                  Options(1));
  Engine plain(*Models().target, {}, other_pool, Options(1));
  auto kind_of = [](Engine& engine, EngineRequest request) {
    try {
      engine.Submit(std::move(request));
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::kInternal;  // not refused
  };
  const ErrorKind bad = ErrorKind::kInvalidArgument;
  EXPECT_EQ(kind_of(with_mtp, {{}, Greedy(5), nullptr}), bad);
  EXPECT_EQ(kind_of(with_mtp, {Prompt(128, 1), Greedy(5), nullptr}), bad);  // n_ctx is 128
  EXPECT_EQ(kind_of(with_mtp, {{2, 3, 512}, Greedy(5), nullptr}), bad);
  EXPECT_EQ(kind_of(with_mtp, {{2, -1}, Greedy(5), nullptr}), bad);
  GenerateParams p = Greedy(5);
  p.sampling.top_p = 1.5f;
  EXPECT_EQ(kind_of(with_mtp, {{2, 3}, p, nullptr}), bad);
  p = Greedy(5);
  p.sampling.logit_bias = {{600, 1.0f}};
  EXPECT_EQ(kind_of(with_mtp, {{2, 3}, p, nullptr}), bad);
  p = WithMtp(Greedy(5), 2, false);
  p.spec.draft_min = 3;
  EXPECT_EQ(kind_of(with_mtp, {{2, 3}, p, nullptr}), bad);
  EXPECT_EQ(kind_of(plain, {{2, 3}, WithMtp(Greedy(5), 2, false), nullptr}), bad);
  p = Greedy(5);
  p.spec.type = SpecType::kDraft;
  EXPECT_EQ(kind_of(with_mtp, {{2, 3}, p, nullptr}), bad);  // no draft model loaded
  EXPECT_EQ(with_mtp.Metrics().requests_started, 0);
  // The longest prompt that fits runs (and stops at the context end).
  Recorder rec(1);
  with_mtp.Submit({Prompt(127, 2), Greedy(5), rec.Callback(0)});
  rec.WaitFinals(1);
  EXPECT_EQ(rec.Get(0).result.stop_reason, StopReason::kContext);
  EXPECT_EQ(rec.Get(0).result.tokens.size(), 1u);
  EXPECT_THROW({ Engine bad_engine(*Models().target, {}, other_pool, Options(0)); }, Error);
}

TEST(EngineControl, FailuresStayWithTheirRequest) {
  const EngineOptions options = Options(2);
  ThreadPool pool(2);
  Engine engine(*Models().target,
                MakeDrafters({*Models().target, Models().assistant.get(), nullptr, pool}), pool,
                options);
  Recorder rec(5);
  // 0: its callback throws at the fifth token, in the middle of verification rounds.
  engine.Submit({Prompt(18, 13), WithMtp(Greedy(30), 4, false), rec.Callback(0, [](int, int n) {
                   if (n == 5) throw std::runtime_error("client exploded");
                   return true;
                 })});
  // 1: bans every token, so its first draw fails.
  GenerateParams banned = Sampled(10, 1);
  for (int t = 0; t < Models().target->config().n_vocab; ++t) {
    banned.sampling.logit_bias.push_back({t, -INFINITY});
  }
  engine.Submit({Prompt(9, 14), banned, rec.Callback(1)});
  // 2-4: unaffected.
  const std::vector<std::vector<int32_t>> prompts = {Prompt(21, 15), Prompt(8, 16), Prompt(33, 17)};
  const std::vector<GenerateParams> params = {WithMtp(Sampled(25, 21), 3, false), Greedy(25),
                                              WithMtp(Greedy(25), 6, true)};
  for (int i = 0; i < 3; ++i) engine.Submit({prompts[i], params[i], rec.Callback(2 + i)});
  rec.WaitFinals(5);

  const Outcome thrower = rec.Get(0), banned_all = rec.Get(1);
  EXPECT_NE(thrower.error.find("client exploded"), std::string::npos) << thrower.error;
  EXPECT_EQ(thrower.result.tokens.size(), 5u);
  EXPECT_EQ(thrower.result.stop_reason, StopReason::kError);
  EXPECT_FALSE(banned_all.error.empty());
  EXPECT_TRUE(banned_all.result.tokens.empty());
  for (int i = 0; i < 3; ++i) {
    const Outcome o = rec.Get(2 + i);
    EXPECT_EQ(o.error, "") << i;
    EXPECT_EQ(o.result.tokens, RunAlone(prompts[i], params[i], options.kv).tokens) << i;
  }
  const EngineMetrics m = engine.Metrics();
  EXPECT_EQ(m.requests_failed, 2);
  EXPECT_EQ(m.requests_finished, 3);
  EXPECT_EQ(m.busy_slots, 0);
}

}  // namespace
}  // namespace tandem
