// Shared helpers of the engine tests: one random tiny target with its MTP assistant and a draft
// model, the Generator reference, prompts and parameter builders, and a thread-safe recorder of
// engine events.
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/generator.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "speculative/loaded_drafters.h"

namespace tandem::testing_engine {

struct TinyPair {
  std::unique_ptr<Gemma4Model> target;
  std::unique_ptr<Gemma4Assistant> assistant;
  std::unique_ptr<Gemma4Model> draft;  // another random tiny-e2b (same vocabulary)
};

// tiny-e2b (32-token sliding window, 512 tokens) with its centroid-head assistant and a draft
// model, written once.
inline const TinyPair& Models() {
  static const TinyPair* pair = [] {
    // Unique per process: ctest runs the cases of a binary in parallel processes.
    const std::string dir = testing::TempDir() + "engine_" + std::to_string(getpid()) + "_";
    const std::string t = dir + "tiny_e2b.gguf", a = dir + "tiny_e2b_asst.gguf",
                      d = dir + "tiny_e2b_draft.gguf";
    RandomModelOptions options;
    options.weight_type = TensorType::kQ8_0;
    WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, t);
    WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", true), options, a);
    options.seed = 99;
    WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, d);
    auto* p = new TinyPair;
    p->target = Gemma4Model::Load(t);
    p->assistant = Gemma4Assistant::Load(a, *p->target);
    p->draft = Gemma4Model::Load(d);
    return p;
  }();
  return *pair;
}

inline std::vector<int32_t> Prompt(int n, int salt) {
  std::vector<int32_t> p;
  for (int i = 0; i < n; ++i) p.push_back(2 + (i * 31 + salt * 97 + i * i * salt) % 500);
  return p;
}

inline std::vector<int32_t> Concat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline GenerateParams Greedy(int n) {
  GenerateParams p;
  p.n_predict = n;
  p.sampling.temperature = 0.0f;
  return p;
}

inline GenerateParams Sampled(int n, uint32_t seed, float temperature = 0.9f) {
  GenerateParams p;
  p.n_predict = n;
  p.sampling.temperature = temperature;
  p.sampling.seed = seed;
  return p;
}

// Turns MTP on: adaptive lengths only make sense for greedy requests in these tests (a sampled
// request's draws depend on its draft lengths, and adaptive lengths depend on timing).
inline GenerateParams WithMtp(GenerateParams p, int draft_max, bool adaptive) {
  p.spec.type = SpecType::kMtp;
  p.spec.draft_max = draft_max;
  p.spec.adaptive = adaptive;
  return p;
}

// Turns draft-model speculation on.
inline GenerateParams WithDraftModel(GenerateParams p, int draft_max, bool adaptive) {
  p.spec.type = SpecType::kDraft;
  p.spec.draft_max = draft_max;
  p.spec.adaptive = adaptive;
  return p;
}

// The reference: the request run alone through a fresh Generator.
inline GenerateResult RunAlone(const std::vector<int32_t>& prompt, const GenerateParams& params,
                               const KvCacheOptions& kv) {
  ThreadPool pool(1);
  Generator gen(
      *Models().target,
      MakeDrafters({*Models().target, Models().assistant.get(), Models().draft.get(), pool}), pool,
      kv);
  return gen.Generate(prompt, params, nullptr);
}

// What the engine told one request.
struct Outcome {
  std::vector<int32_t> event_tokens;
  int finals = 0;
  int events_after_final = 0;
  GenerateResult result;
  std::string error;
};

// Records the events of many requests; `hook(index, token_count)` (optional) runs on each token
// event and returns what on_event returns.
class Recorder {
 public:
  explicit Recorder(int n) : outcomes_(n) {}

  std::function<bool(const EngineEvent&)> Callback(
      int i, std::function<bool(int index, int n_tokens)> hook = nullptr) {
    return [this, i, hook](const EngineEvent& e) {
      int n_tokens = 0;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        Outcome& o = outcomes_[i];
        if (o.finals > 0) ++o.events_after_final;
        if (e.final) {
          ++o.finals;
          if (e.result != nullptr) o.result = *e.result;
          o.error = e.error;
          ++done_;
          cv_.notify_all();
          return true;
        }
        o.event_tokens.push_back(e.token);
        n_tokens = static_cast<int>(o.event_tokens.size());
      }
      return hook ? hook(i, n_tokens) : true;
    };
  }

  // Waits until `n` final events arrived (fails the test after 60 s instead of hanging).
  void WaitFinals(int n) {
    std::unique_lock<std::mutex> lock(mutex_);
    ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_ >= n; }))
        << "only " << done_ << " of " << n << " requests finished";
  }

  Outcome Get(int i) {
    std::lock_guard<std::mutex> lock(mutex_);
    return outcomes_[i];
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Outcome> outcomes_;
  int done_ = 0;
};

// A gate a callback can wait at until the test opens it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

}  // namespace tandem::testing_engine
