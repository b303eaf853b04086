#include "base/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>

namespace tandem {

int PhysicalCoreCount() {
  // Count distinct (physical id, core id) pairs; fall back to the logical count.
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<int, int>> cores;
  int physical = 0;
  std::string line;
  while (std::getline(in, line)) {
    auto value = [&line]() { return std::stoi(line.substr(line.find(':') + 1)); };
    if (line.rfind("physical id", 0) == 0) physical = value();
    if (line.rfind("core id", 0) == 0) cores.insert({physical, value()});
  }
  int n = static_cast<int>(cores.size());
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return n > 0 ? n : 1;
}

ThreadPool::ThreadPool(int n_threads)
    : n_threads_(n_threads > 0 ? n_threads : PhysicalCoreCount()), shares_(n_threads_) {
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    start_cv_.notify_all();
  }
  for (auto& t : workers_) t.join();
}

namespace {

// Contiguous chunk [begin, end) of n tasks for thread t of n_threads.
std::pair<size_t, size_t> Chunk(size_t n, int t, int n_threads) {
  size_t per = n / n_threads, extra = n % n_threads;
  size_t begin = t * per + std::min<size_t>(t, extra);
  return {begin, begin + per + (static_cast<size_t>(t) < extra ? 1 : 0)};
}

inline void CpuRelax() {
  __builtin_ia32_pause();
}

// How long the calling thread spins waiting for the workers to finish before it yields between
// polls (on a loaded machine the worker it waits for may need this very core).
constexpr auto kWaitSpinFor = std::chrono::microseconds(200);

// How long an idle worker spins waiting for the next job before it sleeps on the condition
// variable. Waking a sleeping worker costs a futex wake and a reschedule, and between one
// forward and the next (sampling, the drafter's steps on the calling thread) lie gaps of tens to
// hundreds of microseconds, longer than a spin of a few thousand PAUSEs: each job then paid a
// wake (bench_thread_pool measures the hand-off after such a gap; bench/README.md § Kernel
// choices). A time, not a count: how long a PAUSE takes differs widely between CPUs. Yielding
// between polls instead is no cure: on a VM a system call costs about as much as a wake.
constexpr auto kSpinFor = std::chrono::microseconds(1000);

}  // namespace

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = generation_.load(std::memory_order_acquire);
    const auto idle_since = std::chrono::steady_clock::now();
    for (int spin = 1; gen == seen && !stop_.load(); ++spin) {
      if (spin % 64 == 0) {
        const auto idle = std::chrono::steady_clock::now() - idle_since;
        if (idle > kSpinFor) break;
      }
      CpuRelax();
      gen = generation_.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      sleeping_.fetch_add(1);
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
      sleeping_.fetch_sub(1);
      gen = generation_.load(std::memory_order_acquire);
    }
    if (stop_.load()) return;
    seen = gen;
    if (job_balanced_) {
      RunShares(index);
    } else {
      auto [begin, end] = Chunk(job_tasks_, index, n_threads_);
      if (begin < end) (*job_)(begin, end, index);
    }
    // Read before the job is marked done: the caller may publish the next one right after.
    const PrefetchRange then = then_.empty() ? PrefetchRange{} : then_[index];
    pending_.fetch_sub(1, std::memory_order_acq_rel);
    PrefetchUntilNextJob(then, seen);
  }
}

void ThreadPool::PrefetchUntilNextJob(const PrefetchRange& range, uint64_t job) const {
  const auto* p = static_cast<const char*>(range.begin);
  constexpr size_t kLine = 64, kCheckEvery = 2048;
  for (size_t offset = 0; offset < range.bytes; offset += kLine) {
    if (offset % kCheckEvery == 0 && generation_.load(std::memory_order_relaxed) != job) return;
    __builtin_prefetch(p + offset, 0, 2);
  }
}

namespace {

uint64_t PackRange(uint64_t front, uint64_t back) {
  return back << 32 | front;
}

// Takes up to n tasks from the front (or the back) of a share; returns how many, the first in
// `first`.
size_t Take(std::atomic<uint64_t>& range, size_t n, bool back, size_t* first) {
  uint64_t v = range.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t f = v & 0xFFFFFFFFu, b = v >> 32;
    if (f >= b) return 0;
    const uint64_t k = std::min<uint64_t>(n, b - f);
    const uint64_t next = back ? PackRange(f, b - k) : PackRange(f + k, b);
    if (range.compare_exchange_weak(v, next, std::memory_order_relaxed)) {
      *first = back ? b - k : f;
      return k;
    }
  }
}

}  // namespace

void ThreadPool::RunShares(int thread) {
  const auto& fn = *job_;
  size_t first = 0, k = 0;
  while ((k = Take(shares_[thread].range, job_grain_, false, &first)) > 0) {
    fn(first, first + k, thread);
  }
  for (int i = 1; i < n_threads_; ++i) {
    std::atomic<uint64_t>& other = shares_[(thread + i) % n_threads_].range;
    while ((k = Take(other, 1, true, &first)) > 0) fn(first, first + k, thread);
  }
}

void ThreadPool::RunJob(const std::function<void(size_t, size_t, int)>& fn, size_t n_tasks,
                        bool balanced, std::span<const PrefetchRange> then) {
  job_ = &fn;
  then_ = then.size() == static_cast<size_t>(n_threads_) ? then : std::span<const PrefetchRange>();
  job_tasks_ = n_tasks;
  job_balanced_ = balanced;
  if (balanced) {
    // Own tasks in grains of about a 32nd of a share (at most 16: the last grain in flight is
    // what the other threads may still wait for).
    job_grain_ = std::clamp<size_t>(n_tasks / n_threads_ / 32, 1, 16);
    for (int t = 0; t < n_threads_; ++t) {
      auto [begin, end] = Chunk(n_tasks, t, n_threads_);
      shares_[t].range.store(PackRange(begin, end), std::memory_order_relaxed);
    }
  }
  pending_.store(n_threads_ - 1);
  generation_.fetch_add(1);  // publishes the job (release: the stores above happen before)
  if (sleeping_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    start_cv_.notify_all();
  }
  if (balanced) {
    RunShares(0);
  } else {
    auto [begin, end] = Chunk(n_tasks, 0, n_threads_);
    if (begin < end) fn(begin, end, 0);
  }
  Wait();
  job_ = nullptr;
  then_ = {};
}

void ThreadPool::Wait() {
  // Spin a little, then yield: on a loaded machine the worker we wait for may need this very
  // core.
  const auto waiting_since = std::chrono::steady_clock::now();
  bool yield = false;
  for (int spin = 1; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (yield) {
      std::this_thread::yield();
    } else {
      CpuRelax();
      if (spin % 64 == 0) yield = std::chrono::steady_clock::now() - waiting_since > kWaitSpinFor;
    }
  }
}

void ThreadPool::ParallelForRange(size_t n_tasks,
                                  const std::function<void(size_t, size_t, int)>& fn) {
  if (n_tasks == 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    fn(0, n_tasks, 0);
    return;
  }
  RunJob(fn, n_tasks, false);
}

size_t ThreadPool::ShareBegin(size_t n_tasks, int thread) const {
  return Chunk(n_tasks, thread, n_threads_).first;
}

void ThreadPool::ParallelForBalanced(size_t n_tasks,
                                     const std::function<void(size_t, size_t, int)>& fn,
                                     std::span<const PrefetchRange> then) {
  if (n_tasks >= (uint64_t{1} << 32)) return ParallelForRange(n_tasks, fn);
  if (n_tasks == 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    fn(0, n_tasks, 0);
    return;
  }
  RunJob(fn, n_tasks, true, then);
}

void ThreadPool::ParallelFor(size_t n_tasks, const std::function<void(size_t)>& fn) {
  ParallelForRange(n_tasks, [&fn](size_t begin, size_t end, int) {
    for (size_t i = begin; i < end; ++i) fn(i);
  });
}

ThreadPool& GlobalThreadPool(int n_threads) {
  static std::unique_ptr<ThreadPool> pool;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (!pool || (n_threads > 0 && n_threads != pool->size())) {
    pool.reset();
    pool = std::make_unique<ThreadPool>(n_threads);
  }
  return *pool;
}

}  // namespace tandem
