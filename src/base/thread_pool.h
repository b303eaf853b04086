// A fixed pool of worker threads shared by all kernels. Work is split into tasks by index; which
// thread runs a task never changes what the task computes, so results do not depend on the
// thread count (the numerics contract: no reduction is ever split across threads).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace tandem {

class ThreadPool {
 public:
  // n_threads includes the calling thread; 0 means the number of physical cores.
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(task) for task in [0, n_tasks), spread over the pool's threads (the caller works
  // too); returns when all are done. Tasks are handed out in contiguous chunks by thread index.
  // Not reentrant: fn must not call ParallelFor on the same pool.
  void ParallelFor(size_t n_tasks, const std::function<void(size_t task)>& fn);

  // Like ParallelFor, but fn gets a contiguous range [begin, end) of tasks and the thread index.
  void ParallelForRange(size_t n_tasks,
                        const std::function<void(size_t begin, size_t end, int thread)>& fn);

  // Like ParallelForRange, but fn may be called several times per thread, with smaller ranges:
  // each thread works through its contiguous share from the front, a few tasks at a time, then
  // takes the tasks still untouched at the back of the others' shares, one at a time. A thread
  // that started late or runs slower (a shared VM's vCPU) is helped instead of waited for.
  //
  // `then`, if not empty, holds a byte range per pool thread (entry 0, the caller's, is not
  // used): a worker done with its part pulls its range into its cache while it waits for the
  // next job, and stops as soon as that job is published. A hint only: nothing a job computes
  // depends on it, and the ranges may be stale (prefetching never faults).
  struct PrefetchRange {
    const void* begin = nullptr;
    size_t bytes = 0;
  };
  void ParallelForBalanced(size_t n_tasks,
                           const std::function<void(size_t begin, size_t end, int thread)>& fn,
                           std::span<const PrefetchRange> then = {});

  // The first task of thread `thread`'s contiguous share of n_tasks (the ParallelFor* split).
  size_t ShareBegin(size_t n_tasks, int thread) const;

 private:
  // One thread's share of a balanced job: the front and back of its untaken tasks, packed in
  // one word so that taking from either end is one compare-and-swap.
  struct alignas(64) Share {
    std::atomic<uint64_t> range{0};
  };
  void WorkerLoop(int index);
  // Publishes a job to the workers, runs the caller's part and waits for the workers.
  void RunJob(const std::function<void(size_t, size_t, int)>& fn, size_t n_tasks, bool balanced,
              std::span<const PrefetchRange> then = {});
  // A worker's prefetch of `range` after job `job`, until a later job is published.
  void PrefetchUntilNextJob(const PrefetchRange& range, uint64_t job) const;
  // A balanced job's part of thread `thread`: its share, then what is left of the others'.
  void RunShares(int thread);
  void Wait();  // until every worker finished the job

  int n_threads_;
  std::vector<std::thread> workers_;
  // A job is published by storing job_/job_tasks_ and then bumping generation_; workers spin on
  // generation_ for up to a millisecond before sleeping on start_cv_ (decode steps run many
  // small matmuls back to back with short gaps, and a futex wake per call would dominate them).
  std::mutex mutex_;
  std::condition_variable start_cv_;
  const std::function<void(size_t, size_t, int)>* job_ = nullptr;
  size_t job_tasks_ = 0;
  bool job_balanced_ = false;
  size_t job_grain_ = 1;                 // tasks a thread takes at once from its own share
  std::vector<Share> shares_;            // [n_threads_], for balanced jobs
  std::span<const PrefetchRange> then_;  // the job's prefetch hints, empty or [n_threads_]
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};   // workers still running the current job
  std::atomic<int> sleeping_{0};  // workers blocked (or about to block) on start_cv_
  std::atomic<bool> stop_{false};
};

// Number of physical cores (hyper-threads of one core count once); at least 1.
int PhysicalCoreCount();

// The process-wide pool; created on first use with `n_threads` (0 = physical cores). Later calls
// with a different non-zero count resize it.
ThreadPool& GlobalThreadPool(int n_threads = 0);

}  // namespace tandem
