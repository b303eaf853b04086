// ResponseStore: least-recently-used order, both limits, an entry too large to keep, replacing
// and removing, and many threads storing and reading at once.
#include "server/response_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"

namespace tandem::server {
namespace {

// An entry whose EntryBytes under an id of `id_size` characters is exactly `bytes`.
StoredResponse EntryOf(size_t bytes, size_t id_size = 2) {
  const size_t body = bytes - id_size;
  return {std::string(body / 2, 'r'), std::string(body - body / 2, 'c'), ""};
}

// "tT_I" (built by appends: GCC 12 warns, wrongly, on chains of std::string operator+).
std::string ThreadId(int t, int i) {
  std::string id = "t";
  id += std::to_string(t);
  id += '_';
  id += std::to_string(i);
  return id;
}

TEST(ResponseStoreTest, GetReturnsWhatWasPut) {
  ResponseStore store(4, 1000);
  EXPECT_EQ(store.Get("r1", ""), nullptr);
  ASSERT_TRUE(store.Put("r1", {"{\"id\":\"r1\"}", "[1]", ""}));
  const auto got = store.Get("r1", "");
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->response, "{\"id\":\"r1\"}");
  EXPECT_EQ(got->conversation, "[1]");
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(store.bytes(), 2u + 11u + 3u);
  EXPECT_EQ(ResponseStore::EntryBytes("r1", *got), 16u);
}

TEST(ResponseStoreTest, CountLimitEvictsTheLeastRecentlyUsed) {
  ResponseStore store(3, 1000);
  for (const char* id : {"a1", "b1", "c1"}) ASSERT_TRUE(store.Put(id, EntryOf(10)));
  ASSERT_NE(store.Get("a1", ""), nullptr);  // a1 is now the most recent: b1 is the oldest
  ASSERT_TRUE(store.Put("d1", EntryOf(10)));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.Get("b1", ""), nullptr);
  EXPECT_NE(store.Get("a1", ""), nullptr);
  EXPECT_NE(store.Get("c1", ""), nullptr);
  EXPECT_NE(store.Get("d1", ""), nullptr);
  // Order now (newest first): d1 c1 a1; two more push out a1 then c1.
  ASSERT_TRUE(store.Put("e1", EntryOf(10)));
  EXPECT_EQ(store.Get("a1", ""), nullptr);
  ASSERT_TRUE(store.Put("f1", EntryOf(10)));
  EXPECT_EQ(store.Get("c1", ""), nullptr);
  EXPECT_NE(store.Get("d1", ""), nullptr);
}

TEST(ResponseStoreTest, ByteLimitEvictsAsManyAsNeeded) {
  ResponseStore store(100, 100);
  ASSERT_TRUE(store.Put("a1", EntryOf(30)));
  ASSERT_TRUE(store.Put("b1", EntryOf(30)));
  ASSERT_TRUE(store.Put("c1", EntryOf(30)));
  EXPECT_EQ(store.bytes(), 90u);
  ASSERT_TRUE(store.Put("d1", EntryOf(10)));  // exactly at the limit: nothing evicted
  EXPECT_EQ(store.size(), 4u);
  EXPECT_EQ(store.bytes(), 100u);
  ASSERT_TRUE(store.Put("e1", EntryOf(65)));  // 165 bytes: a1, b1 and c1 must go (d1 + e1 = 75)
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.bytes(), 75u);
  EXPECT_EQ(store.Get("a1", ""), nullptr);
  EXPECT_EQ(store.Get("b1", ""), nullptr);
  EXPECT_EQ(store.Get("c1", ""), nullptr);
  EXPECT_NE(store.Get("d1", ""), nullptr);
  EXPECT_NE(store.Get("e1", ""), nullptr);
}

TEST(ResponseStoreTest, AnEntryLargerThanTheByteLimitIsRefusedAndEvictsNothing) {
  ResponseStore store(10, 100);
  ASSERT_TRUE(store.Put("a1", EntryOf(60)));
  EXPECT_FALSE(store.Put("b1", EntryOf(101)));
  EXPECT_EQ(store.Get("b1", ""), nullptr);
  EXPECT_NE(store.Get("a1", ""), nullptr);
  EXPECT_EQ(store.bytes(), 60u);
  EXPECT_TRUE(store.Put("b1", EntryOf(100)));  // the limit itself fits, alone
  EXPECT_EQ(store.Get("a1", ""), nullptr);
  EXPECT_EQ(store.size(), 1u);
}

TEST(ResponseStoreTest, PutReplacesAnEntryWithTheSameId) {
  ResponseStore store(2, 1000);
  ASSERT_TRUE(store.Put("a1", EntryOf(40)));
  ASSERT_TRUE(store.Put("b1", EntryOf(10)));
  ASSERT_TRUE(store.Put("a1", {"new", "x", ""}));
  EXPECT_EQ(store.size(), 2u);
  EXPECT_EQ(store.bytes(), 10u + 2u + 4u);
  EXPECT_EQ(store.Get("a1", "")->response, "new");
  EXPECT_NE(store.Get("b1", ""), nullptr);
}

TEST(ResponseStoreTest, RemoveDropsOneEntryAndItsBytes) {
  ResponseStore store(4, 1000);
  ASSERT_TRUE(store.Put("a1", EntryOf(20)));
  ASSERT_TRUE(store.Put("b1", EntryOf(30)));
  EXPECT_TRUE(store.Remove("a1", ""));
  EXPECT_FALSE(store.Remove("a1", ""));
  EXPECT_FALSE(store.Remove("zz", ""));
  EXPECT_EQ(store.Get("a1", ""), nullptr);
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(store.bytes(), 30u);
}

TEST(ResponseStoreTest, AnEntryIsFoundAndRemovedOnlyByTheKeyThatStoredIt) {
  ResponseStore store(4, 1000);
  ASSERT_TRUE(store.Put("a1", {"mine", "conv", "key-a"}));
  EXPECT_EQ(store.Get("a1", "key-b"), nullptr);
  EXPECT_EQ(store.Get("a1", ""), nullptr);  // no key is not every key
  EXPECT_FALSE(store.Remove("a1", "key-b"));
  ASSERT_NE(store.Get("a1", "key-a"), nullptr);
  EXPECT_EQ(store.Get("a1", "key-a")->response, "mine");
  EXPECT_EQ(store.bytes(), 2u + 4u + 4u + 5u);  // the owner counts
  EXPECT_TRUE(store.Remove("a1", "key-a"));
}

TEST(ResponseStoreTest, AnEntryReadBeforeEvictionStaysValid) {
  ResponseStore store(1, 1000);
  ASSERT_TRUE(store.Put("a1", {"first", "", ""}));
  const auto held = store.Get("a1", "");
  ASSERT_TRUE(store.Put("b1", EntryOf(10)));
  EXPECT_EQ(store.Get("a1", ""), nullptr);
  EXPECT_EQ(held->response, "first");
}

TEST(ResponseStoreTest, ZeroLimitsAreRefused) {
  EXPECT_THROW(ResponseStore(0, 100), Error);
  EXPECT_THROW(ResponseStore(10, 0), Error);
}

// Threads put and read their own ids and remove their neighbour's, at once; afterwards the limits
// hold and the byte count equals the sum over what is left (a lost update would break one of them).
TEST(ResponseStoreTest, ConcurrentUseKeepsTheLimitsAndTheByteCount) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20000;
  ResponseStore store(64, 64 * 40);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string id = ThreadId(t, i);
        std::string body(static_cast<size_t>(i % 50), 'x');
        body += id;
        store.Put(id, {body, id, ""});
        if (auto got = store.Get(id, ""); got != nullptr && got->conversation != id) ++wrong;
        if (i % 2 == 0) store.Remove(ThreadId((t + 1) % kThreads, i - 1), "");
        if (store.size() > 64 || store.bytes() > 64 * 40) ++wrong;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  size_t sum = 0, held = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      const std::string id = ThreadId(t, i);
      if (auto got = store.Get(id, "")) {
        sum += ResponseStore::EntryBytes(id, *got);
        ++held;
      }
    }
  }
  EXPECT_EQ(held, store.size());
  EXPECT_EQ(sum, store.bytes());
  EXPECT_GT(held, 0u);
}

}  // namespace
}  // namespace tandem::server
