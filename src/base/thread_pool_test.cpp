#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
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

TEST(ThreadPool, PhysicalCoresPositive) {
  EXPECT_GE(PhysicalCoreCount(), 1);
}

}  // namespace
}  // namespace tandem
