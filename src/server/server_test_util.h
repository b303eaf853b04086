// Test helpers for the server: a tokenizer over the synthetic Gemma 4 vocabulary and a scripted
// backend that "generates" given token ids on its own thread, as the engine would.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "model/synthetic_vocab.h"
#include "server/backend.h"
#include "server/route_context.h"
#include "tokenizer/tokenizer.h"

namespace tandem::server::testing {

inline std::unique_ptr<Tokenizer> MakeTestTokenizer() {
  const SyntheticVocab s = MakeSyntheticVocab(512);
  Vocab v;
  v.source = "synthetic";
  v.tokens = s.tokens;
  for (int32_t t : s.types) v.types.push_back(static_cast<TokenType>(t));
  v.merges = s.merges;
  v.bos_id = s.bos;
  v.eos_id = s.eos;
  v.pad_id = s.pad;
  v.unk_id = s.unk;
  return std::make_unique<Tokenizer>(std::move(v));
}

// Emits `script` (cut at n_predict, ended early by an EOG id) one token per `delay`, then the
// final event. Honours Cancel and a callback returning false at the next token.
class FakeBackend : public Backend {
 public:
  std::vector<int32_t> script;
  std::chrono::milliseconds delay{0};
  bool queue_full = false;
  std::set<int32_t> eog;

  ~FakeBackend() override {
    for (std::thread& t : threads_) t.join();
  }

  uint64_t Submit(EngineRequest request) override {
    if (queue_full) Fail(ErrorKind::kUnavailable, "queue full");
    if (request.prompt.empty()) Fail(ErrorKind::kInvalidArgument, "empty prompt");
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t id = ++next_id_;
    last_prompt_ = request.prompt;
    last_params_ = request.params;
    ++submitted_;
    threads_.emplace_back([this, id, request = std::move(request)] { Run(id, request); });
    return id;
  }

  void Cancel(uint64_t id) override {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_.insert(id);
  }

  EngineMetrics Metrics() const override {
    EngineMetrics m;
    m.n_slots = 1;
    m.requests_started = submitted_.load();
    m.requests_cancelled = cancelled_count_.load();
    m.spec.drafted = 4;
    m.spec.accepted = 3;
    m.spec.RecordRound(2, 1);
    m.slots.resize(1);
    m.slots[0].busy = true;
    m.slots[0].speculating = true;
    m.slots[0].spec = m.spec;
    m.spec_by_batch.resize(3);
    m.spec_by_batch[1] = {.drafting = 5, .plain = 7, .drafted_tokens = 11};
    return m;
  }

  // Waits until every submitted request has sent its final event.
  void WaitIdle() {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }

  std::vector<int32_t> last_prompt() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_prompt_;
  }
  GenerateParams last_params() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_params_;
  }
  int64_t cancelled_count() const { return cancelled_count_.load(); }
  int64_t tokens_sent() const { return tokens_sent_.load(); }

 private:
  bool IsCancelled(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_.count(id) > 0;
  }

  void Run(uint64_t id, const EngineRequest& request) {
    GenerateResult result;
    result.prompt_tokens = static_cast<int>(request.prompt.size());
    result.stop_reason = StopReason::kLength;
    const int n =
        request.params.n_predict < 0 ? static_cast<int>(script.size()) : request.params.n_predict;
    for (int i = 0; i < n && i < static_cast<int>(script.size()); ++i) {
      if (IsCancelled(id)) {
        result.stop_reason = StopReason::kStopped;
        break;
      }
      if (delay.count() > 0) std::this_thread::sleep_for(delay);
      EngineEvent event;
      event.token = script[i];
      result.tokens.push_back(script[i]);
      ++tokens_sent_;
      if (!request.on_event(event)) {
        result.stop_reason = StopReason::kStopped;
        break;
      }
      if (eog.count(script[i]) > 0) {
        result.stop_reason = StopReason::kEog;
        break;
      }
    }
    if (result.stop_reason == StopReason::kStopped) ++cancelled_count_;
    result.generate_ms = 1.0;
    result.prompt_ms = 1.0;
    EngineEvent final_event;
    final_event.final = true;
    final_event.result = &result;
    request.on_event(final_event);
  }

  std::mutex mu_;
  std::vector<std::thread> threads_;
  std::set<uint64_t> cancelled_;
  uint64_t next_id_ = 0;
  std::vector<int32_t> last_prompt_;
  GenerateParams last_params_;
  std::atomic<int64_t> submitted_{0};
  std::atomic<int64_t> cancelled_count_{0};
  std::atomic<int64_t> tokens_sent_{0};
};

}  // namespace tandem::server::testing
