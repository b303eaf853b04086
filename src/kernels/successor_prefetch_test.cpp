#include "kernels/successor_prefetch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace tandem::kernels {
namespace {

using Range = ThreadPool::PrefetchRange;

// Shares of a product for a pool of two threads, told apart by their worker's start. (Keys are
// matrices, so the tests' stand-ins are cache-line aligned like them.)
std::vector<Range> Shares(const char* start) {
  return {{}, {start, 100}};
}

TEST(SuccessorPrefetch, AfterOnePassEachProductPrefetchesTheNextOnesShares) {
  alignas(64) const char a[64] = {}, b[64] = {}, c[64] = {};
  SuccessorPrefetch successors;
  // First pass: nothing is known yet.
  EXPECT_TRUE(successors.Run({a, 1}, Shares(a)).empty());
  EXPECT_TRUE(successors.Run({b, 1}, Shares(b)).empty());
  EXPECT_TRUE(successors.Run({c, 1}, Shares(c)).empty());
  // Second pass: a was followed by b, b by c, c by a.
  for (int pass = 0; pass < 2; ++pass) {
    auto then = successors.Run({a, 1}, Shares(a));
    ASSERT_EQ(then.size(), 2u);
    EXPECT_EQ(then[1].begin, b);
    EXPECT_EQ(then[1].bytes, 100u);
    then = successors.Run({b, 1}, Shares(b));
    ASSERT_EQ(then.size(), 2u);
    EXPECT_EQ(then[1].begin, c);
    then = successors.Run({c, 1}, Shares(c));
    ASSERT_EQ(then.size(), 2u);
    EXPECT_EQ(then[1].begin, a);
  }
}

TEST(SuccessorPrefetch, TheLatestSuccessorAndSharesWin) {
  alignas(64) const char a[64] = {}, b[64] = {}, c[64] = {};
  SuccessorPrefetch successors;
  successors.Run({a, 1}, Shares(a));
  successors.Run({b, 1}, Shares(b));
  successors.Run({a, 1}, Shares(a));
  successors.Run({c, 1}, Shares(c));  // a is now followed by c
  auto then = successors.Run({a, 1}, Shares(a));
  ASSERT_EQ(then.size(), 2u);
  EXPECT_EQ(then[1].begin, c);
  const std::vector<Range> changed = {{}, {b, 7}};
  successors.Run({c, 1}, changed);  // c's shares changed
  then = successors.Run({a, 1}, Shares(a));
  ASSERT_EQ(then.size(), 2u);
  EXPECT_EQ(then[1].begin, b);
  EXPECT_EQ(then[1].bytes, 7u);
}

TEST(SuccessorPrefetch, RowsAndThreadCountsTellProductsApart) {
  alignas(64) const char a[64] = {}, b[64] = {};
  SuccessorPrefetch successors;
  // The same matrix with 1 and with 4 activation rows is tiled differently: two products.
  successors.Run({a, 1}, Shares(a));
  successors.Run({b, 1}, Shares(b));
  successors.Run({a, 4}, Shares(a));
  EXPECT_TRUE(successors.Run({b, 4}, Shares(b)).empty());
  auto then = successors.Run({a, 1}, Shares(a));
  ASSERT_EQ(then.size(), 2u);
  EXPECT_EQ(then[1].begin, b);
  // Shares learned for two threads are not handed to a caller with three.
  successors.Run({b, 1}, Shares(b));
  EXPECT_TRUE(successors.Run({a, 1}, std::vector<Range>(3)).empty());
}

TEST(SuccessorPrefetch, ATableFullOfOldProductsMakesRoomForNewOnes) {
  // Far more products than the table holds (a mixture of experts' matrices), then two that
  // alternate: they are learned like any others.
  std::vector<char> matrices(64 * 5000 + 64);
  const char* base = matrices.data() + (64 - reinterpret_cast<uintptr_t>(matrices.data()) % 64);
  SuccessorPrefetch successors;
  for (int i = 0; i < 5000; ++i) successors.Run({base + 64 * i, 1}, Shares(base + 64 * i));
  alignas(64) const char a[64] = {}, b[64] = {};
  successors.Run({a, 1}, Shares(a));
  successors.Run({b, 1}, Shares(b));
  auto then = successors.Run({a, 1}, Shares(a));
  ASSERT_EQ(then.size(), 2u);
  EXPECT_EQ(then[1].begin, b);
}

}  // namespace
}  // namespace tandem::kernels
