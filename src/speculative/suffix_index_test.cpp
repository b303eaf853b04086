#include "speculative/suffix_index.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

namespace tandem {
namespace {

// `n` tokens counting up from `first`: no n-gram recurs within it, nor between runs that do not
// overlap.
std::vector<int32_t> Seq(int32_t first, int n) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(first + i);
  return t;
}

std::vector<int32_t> Cat(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

constexpr size_t kBig = size_t{1} << 30;

TEST(SuffixIndex, ProposesWhatFollowedTheContextInAnEarlierDocument) {
  SuffixIndex index(kBig);
  index.Add("", Seq(100, 40));
  // The context ends with 110..115: what followed it was 116, 117, ...
  const std::vector<int32_t> context = Cat({7, 8, 9}, Seq(110, 6));
  const SuffixIndex::Proposal p = index.Propose("", context, 5);
  EXPECT_EQ(p.tokens, Seq(116, 5));
  EXPECT_EQ(p.match, 6);
  // Up to the document's end only.
  EXPECT_EQ(index.Propose("", Seq(130, 8), 64).tokens, Seq(138, 2));
  // Shorter than kShortKey tokens of match: nothing.
  EXPECT_TRUE(index.Propose("", std::vector<int32_t>{7, 8, 112, 113, 114}, 5).tokens.empty());
  EXPECT_EQ(index.Propose("", std::vector<int32_t>{7, 111, 112, 113, 114}, 5).tokens, Seq(115, 5));
  EXPECT_TRUE(index.Propose("", Seq(110, 6), 0).tokens.empty());
  // A context that ends with the document's last tokens: nothing follows them.
  EXPECT_TRUE(index.Propose("", Seq(134, 6), 5).tokens.empty());
}

TEST(SuffixIndex, TheLongestMatchWinsThenTheMostRecent) {
  SuffixIndex index(kBig);
  const std::vector<int32_t> common = {50, 51, 52, 53, 54};
  // Three documents hold `common`, each after its own prefix and followed by its own tokens.
  index.Add("", Cat(Cat({1, 2, 3, 4}, common), {61, 62, 63}));  // oldest, matches 7 below
  index.Add("", Cat(Cat({9, 9, 9, 9}, common), {71, 72, 73}));
  index.Add("", Cat(Cat({8, 8, 8, 8}, common), {81, 82, 83}));  // newest
  // The context ends with {3, 4, common}: the oldest document matches 7 tokens, the others 5.
  SuffixIndex::Proposal p = index.Propose("", Cat({0, 3, 4}, common), 3);
  EXPECT_EQ(p.tokens, (std::vector<int32_t>{61, 62, 63}));
  EXPECT_EQ(p.match, 7);
  // Only `common` matches anywhere: the newest document's continuation.
  p = index.Propose("", Cat({0, 5}, common), 3);
  EXPECT_EQ(p.tokens, (std::vector<int32_t>{81, 82, 83}));
  EXPECT_EQ(p.match, 5);
}

TEST(SuffixIndex, ALongMatchIsFoundPastAFrequentShortOne) {
  SuffixIndex index(kBig);
  // The long match sits in the oldest document; more than kMaxPostings later occurrences of its
  // last kShortKey tokens push it out of the short key's postings, not the long key's.
  const std::vector<int32_t> tail = {50, 51, 52, 53};
  index.Add("", Cat(Cat(Seq(200, 20), tail), {99, 98, 97}));
  for (int i = 0; i < 2 * SuffixIndex::kMaxPostings; ++i) {
    index.Add("", Cat(Cat(Seq(1000 + 100 * i, 6), tail), {300 + i, 1}));
  }
  const SuffixIndex::Proposal p = index.Propose("", Cat(Seq(200, 20), tail), 3);
  EXPECT_EQ(p.tokens, (std::vector<int32_t>{99, 98, 97}));
  EXPECT_EQ(p.match, 24);
}

TEST(SuffixIndex, ARequestNeverDraftsFromAnotherTenantsText) {
  SuffixIndex index(kBig);
  index.Add("key-a", Seq(100, 30));
  index.Add("key-b", Cat(Seq(110, 6), {7, 7, 7}));
  index.Add("", Cat(Seq(110, 6), {5, 5, 5}));
  const std::vector<int32_t> context = Seq(110, 6);
  EXPECT_EQ(index.Propose("key-a", context, 3).tokens, Seq(116, 3));
  EXPECT_EQ(index.Propose("key-b", context, 3).tokens, (std::vector<int32_t>{7, 7, 7}));
  EXPECT_EQ(index.Propose("", context, 3).tokens, (std::vector<int32_t>{5, 5, 5}));
  EXPECT_TRUE(index.Propose("key-c", context, 3).tokens.empty());
  // A tenant whose name is a prefix of another's is another tenant.
  EXPECT_TRUE(index.Propose("key-", context, 3).tokens.empty());
  // Whatever a tenant queries, its proposals hold only its own tokens.
  const std::set<int32_t> b_tokens = {110, 111, 112, 113, 114, 115, 7};
  for (int32_t first = 100; first < 130; ++first) {
    for (const int32_t t : index.Propose("key-b", Seq(first, 6), 64).tokens) {
      EXPECT_TRUE(b_tokens.contains(t)) << t;
    }
  }
  EXPECT_EQ(index.stats().tenants, 3u);
}

TEST(SuffixIndex, EvictsWholeDocumentsLeastRecentlyUsedFirstToStayWithinItsBytes) {
  // The footprint of one 60-token document, measured alone.
  size_t one = 0;
  {
    SuffixIndex probe(kBig);
    probe.Add("", Seq(1000, 60));
    one = probe.stats().bytes;
  }
  // Room for two such documents of the same tenant, not three.
  SuffixIndex index(2 * one + one / 2);
  index.Add("", Seq(1000, 60));  // A
  index.Add("", Seq(2000, 60));  // B
  EXPECT_EQ(index.stats().documents, 2u);
  EXPECT_LE(index.stats().bytes, index.max_bytes());
  // Drafting from A uses it: B is now the least recently used.
  EXPECT_FALSE(index.Propose("", Seq(1010, 5), 3).tokens.empty());
  index.Add("", Seq(3000, 60));  // C evicts B
  EXPECT_EQ(index.stats().documents, 2u);
  EXPECT_EQ(index.stats().evicted, 1);
  EXPECT_LE(index.stats().bytes, index.max_bytes());
  EXPECT_TRUE(index.Propose("", Seq(2010, 5), 3).tokens.empty());
  EXPECT_EQ(index.Propose("", Seq(1010, 5), 3).tokens, Seq(1015, 3));
  EXPECT_EQ(index.Propose("", Seq(3010, 5), 3).tokens, Seq(3015, 3));
  // Eviction crosses tenants (the limit is the server's): A was used last, so C goes.
  EXPECT_FALSE(index.Propose("", Seq(1010, 5), 3).tokens.empty());
  index.Add("other", Seq(4000, 60));
  EXPECT_EQ(index.stats().documents, 2u);
  EXPECT_TRUE(index.Propose("", Seq(3010, 5), 3).tokens.empty());
  EXPECT_EQ(index.Propose("other", Seq(4010, 5), 3).tokens, Seq(4015, 3));
  // Evicting every document of a tenant frees the tenant too.
  index.Add("", Seq(5000, 60));
  index.Add("", Seq(6000, 60));
  EXPECT_EQ(index.stats().tenants, 1u);
  EXPECT_LE(index.stats().bytes, index.max_bytes());
}

TEST(SuffixIndex, RemovingEveryDocumentLeavesNothing) {
  // An index with room for one document only: each new one evicts the last, and the footprint
  // returns to exactly one document's (every key and tenant of the evicted ones is freed).
  SuffixIndex probe(kBig);
  probe.Add("t", Cat(Seq(10, 30), Seq(10, 30)));  // repeats within the document
  const size_t one = probe.stats().bytes;
  SuffixIndex index(one + one / 4);
  for (int i = 0; i < 5; ++i) index.Add("t", Cat(Seq(10 + 100 * i, 30), Seq(10 + 100 * i, 30)));
  EXPECT_EQ(index.stats().documents, 1u);
  EXPECT_EQ(index.stats().bytes, one);
}

TEST(SuffixIndex, ADocumentLargerThanTheLimitKeepsItsLastTokens) {
  SuffixIndex index(8 * 1024);
  index.Add("", Seq(1, 1000));
  const SuffixIndex::Stats s = index.stats();
  EXPECT_EQ(s.documents, 1u);
  EXPECT_LT(s.tokens, 1000u);
  EXPECT_GT(s.tokens, 5u);
  EXPECT_LE(s.bytes, index.max_bytes());
  EXPECT_EQ(index.Propose("", Seq(990, 5), 3).tokens, Seq(995, 3));
  SuffixIndex none(0);
  none.Add("", Seq(1, 100));
  EXPECT_EQ(none.stats().documents, 0u);
  EXPECT_TRUE(none.Propose("", Seq(10, 5), 3).tokens.empty());
}

TEST(SuffixIndex, TheNextTurnOfAConversationReplacesTheLast) {
  SuffixIndex index(kBig);
  const std::vector<int32_t> turn1 = Cat(Seq(100, 20), {900});  // ends with its end-of-turn
  index.Add("", turn1);
  index.Add("x", Seq(500, 20));
  // The next prompt holds the last turn (its end-of-turn rendered differently) and goes on.
  const std::vector<int32_t> turn2 = Cat(Cat(Seq(100, 20), {901}), Seq(300, 20));
  index.Add("", turn2);
  SuffixIndex::Stats s = index.stats();
  EXPECT_EQ(s.documents, 2u);
  EXPECT_EQ(s.replaced, 1);
  EXPECT_EQ(index.Propose("", Seq(110, 5), 3).tokens, Seq(115, 3));
  EXPECT_EQ(index.Propose("", Seq(300, 5), 3).tokens, Seq(305, 3));
  // Another tenant's document, or one this does not extend, stays.
  index.Add("", Seq(100, 10));
  EXPECT_EQ(index.stats().documents, 3u);
}

TEST(SuffixIndex, ConcurrentAddsAndProposalsStayConsistent) {
  SuffixIndex index(64 * 1024);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&index, t] {
      const std::string tenant = t % 2 ? "t1" : "t0";
      for (int i = 0; i < 200; ++i) {
        const int32_t base = 10000 * (t % 2) + 37 * i;
        index.Add(tenant, Seq(base, 40));
        for (const int32_t tok : index.Propose(tenant, Seq(base + 3, 6), 8).tokens) {
          // Tenant t0's tokens are below 10000, t1's above.
          EXPECT_EQ(tok >= 10000, t % 2 == 1);
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_LE(index.stats().bytes, index.max_bytes());
}

}  // namespace
}  // namespace tandem
