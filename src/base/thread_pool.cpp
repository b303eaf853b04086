#include "base/thread_pool.h"

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
    : n_threads_(n_threads > 0 ? n_threads : PhysicalCoreCount()) {
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

constexpr int kSpinIterations = 2000;  // tens of microseconds: bridges back-to-back calls only

}  // namespace

void ThreadPool::WorkerLoop(int index) {
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = generation_.load(std::memory_order_acquire);
    for (int spin = 0; gen == seen && spin < kSpinIterations && !stop_.load(); ++spin) {
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
    const auto* job = job_;
    auto [begin, end] = Chunk(job_tasks_, index, n_threads_);
    if (begin < end) (*job)(begin, end, index);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::ParallelForRange(size_t n_tasks,
                                  const std::function<void(size_t, size_t, int)>& fn) {
  if (n_tasks == 0) return;
  if (n_threads_ == 1 || n_tasks == 1) {
    fn(0, n_tasks, 0);
    return;
  }
  job_ = &fn;
  job_tasks_ = n_tasks;
  pending_.store(n_threads_ - 1);
  generation_.fetch_add(1);  // publishes job_ and job_tasks_
  if (sleeping_.load() > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    start_cv_.notify_all();
  }
  auto [begin, end] = Chunk(n_tasks, 0, n_threads_);
  if (begin < end) fn(begin, end, 0);
  // Wait for the workers; yield soon, since on a loaded machine the worker we wait for may need
  // this very core.
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpinIterations / 8) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  job_ = nullptr;
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
