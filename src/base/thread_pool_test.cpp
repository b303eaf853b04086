#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tandem {
namespace {

TEST(ThreadPool, RunsEveryTaskOnce) {
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    for (size_t n : {0u, 1u, 3u, 17u, 1000u}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelFor(n, [&](size_t i) { hits[i]++; });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << threads << " " << n;
    }
  }
}

TEST(ThreadPool, RangesAreContiguousAndCoverAll) {
  ThreadPool pool(3);
  std::vector<int> owner(10, -1);
  pool.ParallelForRange(10, [&](size_t b, size_t e, int t) {
    for (size_t i = b; i < e; ++i) owner[i] = t;
  });
  for (size_t i = 1; i < owner.size(); ++i) EXPECT_LE(owner[i - 1], owner[i]);
  for (int o : owner) EXPECT_GE(o, 0);
}

TEST(ThreadPool, BalancedRunsEveryTaskOnceInEveryThreadsOrder) {
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    for (size_t n : {0u, 1u, 2u, 5u, 17u, 1000u, 40000u}) {
      std::vector<std::atomic<int>> hits(n);
      pool.ParallelForBalanced(n, [&](size_t b, size_t e, int) {
        ASSERT_LT(b, e);
        ASSERT_LE(e, n);
        for (size_t i = b; i < e; ++i) hits[i]++;
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << threads << " " << n;
    }
  }
}

TEST(ThreadPool, BalancedJobsHelpAThreadThatIsHeldUp) {
  // Thread 0 (the caller) is held up on its first task until the others have run every other
  // task: they must take the rest of its share, not wait for it (without that, the wait below
  // would end only at its deadline).
  ThreadPool pool(2);
  const size_t n = 64;
  std::vector<std::atomic<int>> owner(n);
  for (auto& o : owner) o = -1;
  std::atomic<size_t> done{0};
  pool.ParallelForBalanced(n, [&](size_t b, size_t e, int t) {
    for (size_t i = b; i < e; ++i) {
      if (i == 0) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (done.load() < n - 1 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      }
      owner[i] = t;
      done++;
    }
  });
  EXPECT_EQ(done.load(), n);
  // Its share was the first half: all of it but the first task went to the worker.
  for (size_t i = 1; i < n; ++i) EXPECT_EQ(owner[i].load(), 1) << i;
  EXPECT_EQ(owner[0].load(), 0);
}

TEST(ThreadPool, APrefetchHintGivesWayToTheNextJob) {
  // The worker's range runs far past the buffer (prefetches never fault): gone through to its
  // end instead of left when the next job is published, it would hold that job up for days.
  ThreadPool pool(2);
  std::vector<char> buffer(4096);
  const std::vector<ThreadPool::PrefetchRange> then = {{}, {buffer.data(), size_t{1} << 46}};
  std::vector<std::atomic<int>> hits(8);
  for (int job = 0; job < 4; ++job) {
    pool.ParallelForBalanced(
        hits.size(),
        [&](size_t b, size_t e, int) {
          for (size_t i = b; i < e; ++i) hits[i]++;
        },
        then);
  }
  pool.ParallelFor(hits.size(), [&](size_t i) { hits[i]++; });
  for (auto& h : hits) EXPECT_EQ(h.load(), 5);
  // Hints for another number of threads are not used (reading them would overrun the span).
  pool.ParallelForBalanced(
      hits.size(),
      [&](size_t b, size_t e, int) {
        for (size_t i = b; i < e; ++i) hits[i]++;
      },
      std::span(then).first(1));
  for (auto& h : hits) EXPECT_EQ(h.load(), 6);
}

TEST(ThreadPool, ShareBeginIsWhereEachThreadsRangeStarts) {
  ThreadPool pool(3);
  std::vector<int> owner(10, -1);
  pool.ParallelForRange(10, [&](size_t b, size_t e, int t) {
    for (size_t i = b; i < e; ++i) owner[i] = t;
  });
  for (int t = 0; t < 3; ++t) {
    const size_t begin = pool.ShareBegin(10, t);
    EXPECT_EQ(owner[begin], t);
    if (begin > 0) {
      EXPECT_EQ(owner[begin - 1], t - 1);
    }
  }
  EXPECT_EQ(pool.ShareBegin(10, 3), 10u);
}

TEST(ThreadPool, PhysicalCoresPositive) {
  EXPECT_GE(PhysicalCoreCount(), 1);
}

}  // namespace
}  // namespace tandem
