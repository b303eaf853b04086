// The serving engine: a request queue, the slots, and the engine thread that drafts for every
// speculating slot at once and then merges every active slot's rows into one target forward per
// step (continuous batching).
#include "engine/engine.h"

#include <algorithm>
#include <cmath>
#include <exception>

#include "base/error.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "engine/engine_impl.h"
#include "engine/prompt_media.h"
#include "model/target_model.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {

Engine::Impl::Impl(const TargetModel& target, DrafterSet drafters, ThreadPool& pool,
                   const EngineOptions& options)
    : target_(target), pool_(pool), options_(options), drafters_(std::move(drafters)) {
  if (options.n_slots < 1 || options.max_queue < 0 || options.prefill_chunk < 1) {
    Fail(ErrorKind::kInvalidArgument,
         "engine: n_slots and prefill_chunk must be >= 1 and max_queue >= 0");
  }
  options_.kv.n_seq = options.n_slots;
  cache_ = target.NewKvCache(options_.kv);
  suppress_ = SuppressTokensFromGguf(target.metadata(), target.n_vocab());
  for (Drafter* drafter : drafters_.All()) drafter->Prepare(options_.kv);
  for (int s = 0; s < options.n_slots; ++s) {
    slots_.push_back(std::make_unique<EngineSlot>(s, *cache_, target.n_vocab(), target.n_embd(),
                                                  target.MediaBidirectional()));
  }
  metrics_.n_slots = options.n_slots;
  metrics_.slots.resize(options.n_slots);
  slot_finished_.resize(options.n_slots);
  metrics_.kv_bytes = cache_->bytes();
  metrics_.kv_capacity_positions = static_cast<int64_t>(options_.kv.n_ctx) * options.n_slots;
}

bool Engine::Impl::AnyActive() const {
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->active(); });
}

void Engine::Impl::Run() {
  for (;;) {
    std::vector<QueuedRequest> admit, cancelled, dropped;
    std::vector<uint64_t> cancel_ids;
    std::vector<std::function<void()>> tasks;
    bool stop = false, finish_running = true;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !queue_.empty() || !cancels_.empty() || !tasks_.empty() || AnyActive();
      });
      cancel_ids.swap(cancels_);
      tasks.swap(tasks_);
      stop = stopping_;
      finish_running = finish_running_;
      for (uint64_t id : cancel_ids) {
        auto it = std::find_if(queue_.begin(), queue_.end(),
                               [id](const QueuedRequest& q) { return q.id == id; });
        if (it != queue_.end()) {
          cancelled.push_back(std::move(*it));
          queue_.erase(it);
        }
      }
      if (stop) {
        for (QueuedRequest& q : queue_) dropped.push_back(std::move(q));
        queue_.clear();
      } else {
        int free = static_cast<int>(std::count_if(slots_.begin(), slots_.end(),
                                                  [](const auto& s) { return !s->active(); }));
        for (; free > 0 && !queue_.empty(); --free) {
          admit.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      metrics_.queue_depth = static_cast<int>(queue_.size());
    }
    for (auto& task : tasks) task();  // each catches its own exceptions
    EndQueued(cancelled, "");
    EndQueued(dropped, kShuttingDownError);
    for (uint64_t id : cancel_ids) {
      for (auto& slot : slots_) {
        if (slot->active() && slot->request_id() == id) slot->Cancel("");
      }
    }
    if (stop && !finish_running) {
      for (auto& slot : slots_) slot->Cancel(kShuttingDownError);
    }
    for (QueuedRequest& q : admit) Admit(std::move(q));
    ReleaseDone();
    if (!AnyActive()) {
      if (stop) break;
      continue;
    }
    StepAndRelease();
  }
}

void Engine::Impl::StepAndRelease() {
  const auto t0 = EngineClock::now();
  bool generating = false;
  for (const auto& slot : slots_) generating |= slot->phase() == SlotPhase::kGenerate;
  try {
    Step();
  } catch (const std::exception& e) {  // a bug in the step itself: fail its requests, live on
    LogError(std::string("engine step failed: ") + e.what());
    for (auto& slot : slots_) FailSlot(slot.get(), std::string("engine error: ") + e.what());
  }
  ReleaseDone();
  UpdateLiveMetrics(MsSince(t0) / 1000.0, generating);
}

void Engine::Impl::Admit(QueuedRequest q) {
  EngineSlot* best = nullptr;
  int best_prefix = -1;
  for (auto& slot : slots_) {
    if (slot->active()) continue;
    const int prefix = slot->ReusablePrefix(q.request);
    if (prefix > best_prefix || (prefix == best_prefix && slot->last_used() < best->last_used())) {
      best = slot.get();
      best_prefix = prefix;
    }
  }
  if (best == nullptr) {  // cannot happen (Run counted the idle slots); keep the request
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_front(std::move(q));
    return;
  }
  // Suppressed ids are banned before sampling, for the target's choices and sampled drafts
  // alike; a greedy draft proposing one is rejected by verification.
  for (const int32_t id : suppress_) {
    q.request.params.sampling.logit_bias.push_back({.token = id, .bias = -INFINITY});
  }
  try {
    Drafter* drafter = drafters_.For(q.request.params.spec.type);
    best->Start(q.id, std::move(q.request), ++stamp_, options_.kv.max_batch - 1, drafter,
                target_.BytesPerToken());
  } catch (const std::exception& e) {
    best->Fail(e.what());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  metrics_.prompt_tokens += best->result().prompt_tokens;
  metrics_.cached_prompt_tokens += best->result().cached_prompt_tokens;
  ++metrics_.busy_slots;
}

void Engine::Impl::Step() {
  // A piece of media encoding per prefilling slot whose next image is not made yet; the other
  // slots' rows go on in this step's forward.
  for (auto& slot : slots_) {
    try {
      slot->AdvanceMedia(pool_);
    } catch (const std::exception& e) {
      slot->Fail(std::string("media encoding failed: ") + e.what());
    }
  }
  int budget = options_.kv.max_batch;
  std::vector<EngineSlot*> generating, prefilling;
  // Generating slots go first so they never starve. When a prompt got no row in such a step,
  // prompts go first in the next one (with at most half the batch each), so no prompt waits
  // forever either; the two orders at most alternate.
  const bool prefill_first = prefill_turn_;
  if (prefill_first) {
    PlanPrefill(budget, std::max(1, std::min(options_.prefill_chunk, budget / 2)), prefilling);
    PlanGenerating(budget, false, generating);
  } else {
    PlanGenerating(budget, true, generating);
    PlanPrefill(budget, options_.prefill_chunk, prefilling);
  }
  prefill_turn_ = false;
  for (const auto& slot : slots_) {
    if (!prefill_first && slot->phase() == SlotPhase::kPrefill &&
        std::find(prefilling.begin(), prefilling.end(), slot.get()) == prefilling.end()) {
      prefill_turn_ = true;
    }
  }

  batch_.Clear();
  std::vector<BatchPart> parts;
  int n_logits = 0;
  for (const std::vector<EngineSlot*>* group : {&generating, &prefilling}) {
    for (EngineSlot* slot : *group) {
      if (slot->phase() != SlotPhase::kGenerate && slot->phase() != SlotPhase::kPrefill) continue;
      BatchPart part;
      part.slot = slot;
      part.row0 = batch_.size();
      part.logit0 = n_logits;
      part.length_before = cache_->Length(slot->seq());
      n_logits += slot->AddRows(batch_);
      part.n_rows = batch_.size() - part.row0;
      parts.push_back(part);
    }
  }
  if (!parts.empty()) ForwardParts(parts, prefilling.empty());
}

void Engine::Impl::PlanGenerating(int& budget, bool rotate, std::vector<EngineSlot*>& planned) {
  std::vector<DraftJob> jobs;
  std::vector<EngineSlot*> job_slots;  // [jobs] slot of each job
  const size_t n = slots_.size();
  const size_t first = rotation_ % n;
  if (rotate) ++rotation_;
  int n_generating = 0;
  for (const auto& slot : slots_) n_generating += slot->phase() == SlotPhase::kGenerate ? 1 : 0;
  for (size_t i = 0; i < n; ++i) {
    EngineSlot* slot = slots_[(first + i) % n].get();
    if (slot->phase() != SlotPhase::kGenerate || budget < 1) continue;
    const int n_draft = slot->PlanRound(budget, n_generating);
    if (n_draft < 0) continue;  // waits for a later step
    budget -= 1 + n_draft;
    planned.push_back(slot);
    if (slot->NeedsDrafter()) {
      jobs.push_back(DraftJob{slot->MakeDraftRequest(), {}, 0, {}});
      job_slots.push_back(slot);
    }
  }
  // Each drafter drafts for all of its slots at once.
  for (Drafter* drafter : drafters_.All()) {
    std::vector<DraftJob> group;
    std::vector<size_t> index;  // [group] its job
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (job_slots[j]->drafter() != drafter) continue;
      group.push_back(std::move(jobs[j]));
      index.push_back(j);
    }
    if (group.empty()) continue;
    drafter->DraftBatch(group, *cache_);
    for (size_t g = 0; g < group.size(); ++g) jobs[index[g]] = std::move(group[g]);
  }
  for (size_t j = 0; j < jobs.size(); ++j) {
    EngineSlot* slot = job_slots[j];
    const int asked = jobs[j].request.n_max + jobs[j].request.tree.max_extra;
    if (!jobs[j].error.empty()) {
      FailSlot(slot, "drafting failed: " + jobs[j].error);
      budget += 1 + asked;
      continue;
    }
    budget += asked - static_cast<int>(jobs[j].result.tokens.size());
    slot->SetDrafts(std::move(jobs[j].result), jobs[j].ms);
  }
  RecordBatchChoices(planned);
}

void Engine::Impl::RecordBatchChoices(const std::vector<EngineSlot*>& planned) {
  if (planned.empty()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto& by_batch = metrics_.spec_by_batch;
  if (by_batch.size() <= planned.size()) by_batch.resize(planned.size() + 1);
  EngineMetrics::BatchChoices& c = by_batch[planned.size()];
  for (EngineSlot* slot : planned) {
    // A slot whose drafting failed has ended; the others verify what they drafted (rows a tree
    // reserved and left unused are not drafts).
    if (slot->drafter() == nullptr || slot->phase() != SlotPhase::kGenerate) continue;
    if (const int drafted = slot->drafted(); drafted > 0) {
      ++c.drafting;
      c.drafted_tokens += drafted;
    } else {
      ++c.plain;
    }
  }
}

void Engine::Impl::PlanPrefill(int& budget, int limit, std::vector<EngineSlot*>& planned) {
  std::vector<EngineSlot*> waiting;
  for (auto& slot : slots_) {
    if (slot->phase() == SlotPhase::kPrefill) waiting.push_back(slot.get());
  }
  std::sort(waiting.begin(), waiting.end(), [](const EngineSlot* a, const EngineSlot* b) {
    return a->last_used() < b->last_used();
  });
  for (EngineSlot* slot : waiting) {
    const int n = std::min({limit, budget, slot->PrefillRemaining()});
    if (n <= 0) break;
    const int planned_rows = slot->PlanPrefill(n, budget);
    if (planned_rows == 0) continue;  // an image that does not fit this step's rows
    budget -= planned_rows;
    planned.push_back(slot);
  }
}

void Engine::Impl::ForwardParts(const std::vector<BatchPart>& parts, bool record_verify_time) {
  std::string what;
  bool failed = false;
  auto t0 = EngineClock::now();
  try {
    target_.Forward(batch_, *cache_, out_, pool_);
  } catch (const std::exception& e) {
    failed = true;
    what = e.what();
  }
  if (!failed) {
    const double ms = MsSince(t0);
    for (const BatchPart& p : parts) Consume(p.slot, p.row0, p.logit0, ms, record_verify_time);
    return;
  }
  LogWarn("engine: a merged forward failed (" + what + "); running its slots one by one");
  for (const BatchPart& p : parts) {
    if (cache_->Length(p.slot->seq()) > p.length_before) {
      cache_->Truncate(p.slot->seq(), p.length_before);
    }
  }
  const ForwardBatch merged = batch_;
  for (const BatchPart& p : parts) {
    batch_.Clear();
    for (int r = p.row0; r < p.row0 + p.n_rows; ++r) batch_.AddRowOf(merged, r);
    t0 = EngineClock::now();
    try {
      target_.Forward(batch_, *cache_, out_, pool_);
    } catch (const std::exception& e) {
      if (cache_->Length(p.slot->seq()) > p.length_before) {
        cache_->Truncate(p.slot->seq(), p.length_before);
      }
      FailSlot(p.slot, e.what());
      continue;
    }
    Consume(p.slot, 0, 0, MsSince(t0), false);
  }
}

void Engine::Impl::Consume(EngineSlot* slot, int row0, int logit0, double ms,
                           bool record_verify_time) {
  try {
    slot->OnForward(out_, row0, logit0, ms, record_verify_time);
  } catch (const std::exception& e) {
    FailSlot(slot, e.what());
  } catch (...) {
    FailSlot(slot, "unknown exception");
  }
}

void Engine::Impl::FailSlot(EngineSlot* slot, const std::string& error) {
  if (slot->active() && slot->phase() != SlotPhase::kDone) slot->Fail(error);
}

void Engine::Impl::EndQueued(std::vector<QueuedRequest>& requests, const std::string& error) {
  for (QueuedRequest& q : requests) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++metrics_.requests_cancelled;
      --in_flight_;
    }
    if (!q.request.on_event) continue;
    GenerateResult result;
    result.stop_reason = StopReason::kCancelled;
    result.prompt_tokens = static_cast<int>(q.request.prompt.size());
    EngineEvent event;
    event.final = true;
    event.result = &result;
    event.error = error;
    try {
      q.request.on_event(event);
    } catch (...) {  // NOLINT: the request is over
    }
  }
  requests.clear();
}

void Engine::Impl::ReleaseDone() {
  for (auto& slot : slots_) {
    const int new_tokens = slot->TakeNewTokens();
    if (new_tokens > 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      metrics_.generated_tokens += new_tokens;
    }
    if (slot->phase() != SlotPhase::kDone) continue;
    slot->Conclude();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const GenerateResult& r = slot->result();
      if (r.stop_reason == StopReason::kError) {
        ++metrics_.requests_failed;
      } else if (r.stop_reason == StopReason::kCancelled || slot->stopped_by_client()) {
        ++metrics_.requests_cancelled;
      } else {
        ++metrics_.requests_finished;
      }
      metrics_.spec.Add(r.spec);
      SlotMetrics& finished = slot_finished_[slot->seq()];
      finished.spec.Add(r.spec);
      ++finished.requests;
      metrics_.slots[slot->seq()] = finished;  // idle from now on
      --metrics_.busy_slots;
      --in_flight_;
    }
    slot->Release();
  }
}

void Engine::Impl::UpdateLiveMetrics(double step_seconds, bool generating) {
  int64_t used = 0;
  for (const auto& slot : slots_) used += cache_->Length(slot->seq());
  std::lock_guard<std::mutex> lock(mutex_);
  metrics_.kv_used_positions = used;
  for (const auto& slot : slots_) {
    SlotMetrics live = slot_finished_[slot->seq()];
    live.busy = slot->active();
    live.speculating = slot->active() && slot->speculating();
    if (slot->active()) live.spec.Add(slot->result().spec);
    metrics_.slots[slot->seq()] = std::move(live);
  }
  if (generating) metrics_.generate_seconds += step_seconds;
}

Engine::Engine(const TargetModel& target, DrafterSet drafters, ThreadPool& pool,
               const EngineOptions& options)
    : impl_(std::make_unique<Impl>(target, std::move(drafters), pool, options)) {
  if (options.warmup) impl_->Warmup();
  if (options.own_thread) impl_->thread_ = std::thread([this] { impl_->Run(); });
}

Engine::~Engine() {
  Shutdown(false);
}

void Engine::RunHere(EngineRequest request) {
  Impl& m = *impl_;
  if (m.options_.own_thread) Fail(ErrorKind::kInternal, "Engine::RunHere: the engine has a thread");
  ValidateEngineRequest(request, m.target_.n_vocab(), m.options_.kv.n_ctx,
                        m.drafters_.For(request.params.spec.type) != nullptr);
  ValidatePromptMedia(request, m.target_.n_embd(), m.options_.kv.max_batch,
                      m.target_.MediaBidirectional());
  Impl::QueuedRequest q;
  {
    std::lock_guard<std::mutex> lock(m.mutex_);
    q.id = m.next_id_++;
    ++m.in_flight_;
    ++m.metrics_.requests_started;
  }
  q.request = std::move(request);
  m.Admit(std::move(q));
  m.ReleaseDone();
  while (m.AnyActive()) m.StepAndRelease();
}

void Engine::ForgetCaches() {
  if (impl_->options_.own_thread) {
    Fail(ErrorKind::kInternal, "Engine::ForgetCaches: the engine has a thread");
  }
  for (auto& slot : impl_->slots_) slot->Forget();
}

const KvCache& Engine::cache() const {
  return *impl_->cache_;
}

uint64_t Engine::Submit(EngineRequest request) {
  Impl& m = *impl_;
  if (!m.options_.own_thread)
    Fail(ErrorKind::kInternal, "Engine::Submit: the engine has no thread");
  ValidateEngineRequest(request, m.target_.n_vocab(), m.options_.kv.n_ctx,
                        m.drafters_.For(request.params.spec.type) != nullptr);
  ValidatePromptMedia(request, m.target_.n_embd(), m.options_.kv.max_batch,
                      m.target_.MediaBidirectional());
  std::lock_guard<std::mutex> lock(m.mutex_);
  if (m.stopping_) {
    ++m.metrics_.requests_rejected;
    Fail(ErrorKind::kUnavailable, "the engine is shutting down");
  }
  if (m.in_flight_ >= m.options_.n_slots + m.options_.max_queue) {
    ++m.metrics_.requests_rejected;
    Fail(ErrorKind::kUnavailable, "queue full: " + std::to_string(m.options_.n_slots) +
                                      " slots busy and " + std::to_string(m.options_.max_queue) +
                                      " requests waiting");
  }
  const uint64_t id = m.next_id_++;
  m.queue_.push_back(Impl::QueuedRequest{id, std::move(request)});
  ++m.in_flight_;
  ++m.metrics_.requests_started;
  m.metrics_.queue_depth = static_cast<int>(m.queue_.size());
  m.wake_.notify_one();
  return id;
}

void Engine::Cancel(uint64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  impl_->cancels_.push_back(id);
  impl_->wake_.notify_one();
}

EngineMetrics Engine::Metrics() const {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  return impl_->metrics_;
}

void Engine::StopAdmitting() {
  std::lock_guard<std::mutex> lock(impl_->mutex_);
  impl_->stopping_ = true;
  impl_->wake_.notify_one();
}

void Engine::Shutdown(bool finish) {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.mutex_);
    if (!m.stopping_) {
      m.stopping_ = true;
      m.finish_running_ = finish;
    } else if (!finish) {
      m.finish_running_ = false;
    }
    m.wake_.notify_one();
  }
  // From on_event (the engine thread itself) the flags are all it can set; a later call joins.
  if (m.thread_.joinable() && std::this_thread::get_id() != m.thread_.get_id()) m.thread_.join();
}

}  // namespace tandem
