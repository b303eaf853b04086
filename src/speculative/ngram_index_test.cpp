#include "speculative/ngram_index.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "kv/kv_cache.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"
#include "speculative/chain_drafter.h"

namespace tandem {
namespace {

NgramIndex Indexed(const std::vector<int32_t>& tokens, int lo = 2, int hi = 4) {
  NgramIndex index(lo, hi);
  for (int32_t t : tokens) index.Append(t);
  return index;
}

// The oracle: for n from hi down to lo, the latest j < end with tokens[j - n, j) equal to the
// last n tokens, then tokens from j on, read through the proposal past the end.
std::vector<int32_t> BruteForce(const std::vector<int32_t>& t, int lo, int hi, int n_max,
                                int* match) {
  const int end = static_cast<int>(t.size());
  *match = 0;
  for (int n = hi; n >= lo; --n) {
    for (int j = end - 1; j >= n; --j) {
      bool same = true;
      for (int i = 1; i <= n && same; ++i) same = t[j - i] == t[end - i];
      if (!same) continue;
      *match = n;
      std::vector<int32_t> ext = t;
      for (int i = 0; i < n_max; ++i) ext.push_back(ext[j + i]);
      return {ext.begin() + end, ext.end()};
    }
  }
  return {};
}

TEST(NgramIndex, ProposesWhatFollowedTheSuffixBefore) {
  int match = -1;
  EXPECT_EQ(Indexed({1, 2, 3, 4, 5, 9, 9, 1, 2, 3}).Propose(2, &match),
            (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(match, 3);
  EXPECT_TRUE(Indexed({1, 2, 3, 4, 5, 6}).Propose(8, &match).empty());
  EXPECT_EQ(match, 0);
  EXPECT_TRUE(Indexed({1, 2}).Propose(8).empty());
  EXPECT_TRUE(Indexed({1, 2, 3, 1, 2}).Propose(0).empty());
}

TEST(NgramIndex, TheLongestSuffixAndTheLatestOccurrenceWin) {
  // "2 3" recurs last before 7, but "1 2 3" only before 4: the longer match rules.
  EXPECT_EQ(Indexed({1, 2, 3, 4, 0, 2, 3, 7, 0, 1, 2, 3}).Propose(1), (std::vector<int32_t>{4}));
  // "1 2" occurs before 5 and later before 6: the latest one.
  EXPECT_EQ(Indexed({1, 2, 5, 0, 1, 2, 6, 0, 1, 2}).Propose(1), (std::vector<int32_t>{6}));
}

TEST(NgramIndex, ALoopContinuesRound) {
  // The latest "7 8" is two tokens back: the proposal reads on through itself.
  EXPECT_EQ(Indexed({3, 7, 8, 7, 8}).Propose(5), (std::vector<int32_t>{7, 8, 7, 8, 7}));
  // A four-line block of 40 tokens repeated: 64 tokens proposed after a few of the repeat.
  std::vector<int32_t> text;
  for (int i = 0; i < 40; ++i) text.push_back(100 + i);
  for (int i = 0; i < 5; ++i) text.push_back(100 + i);
  const std::vector<int32_t> p = Indexed(text, 3, 8).Propose(64);
  ASSERT_EQ(p.size(), 64u);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(p[i], 100 + (5 + i) % 40) << i;
}

TEST(NgramIndex, MatchesABruteForceSearchAsTokensArrive) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    const int vocab = 2 + static_cast<int>(seed % 5);  // small vocabularies recur often
    const int lo = 1 + static_cast<int>(seed % 3), hi = lo + static_cast<int>(seed % 4);
    NgramIndex index(lo, hi);
    std::vector<int32_t> t;
    for (int step = 0; step < 300; ++step) {
      const int32_t token = static_cast<int32_t>(rng.NextBits() % vocab);
      t.push_back(token);
      index.Append(token);
      int match = -1, want_match = -1;
      const int n_max = 1 + step % 9;
      ASSERT_EQ(index.Propose(n_max, &match), BruteForce(t, lo, hi, n_max, &want_match))
          << "seed " << seed << " step " << step;
      ASSERT_EQ(match, want_match);
    }
  }
}

TEST(NgramIndex, SyncAppendsToItsPrefixAndRebuildsForAnotherText) {
  NgramIndex index(2, 4);
  std::vector<int32_t> a = {1, 2, 3, 4, 1, 2};
  index.Sync(a);
  EXPECT_EQ(index.size(), 6u);
  a.push_back(3);
  index.Sync(a);
  EXPECT_EQ(index.size(), 7u);
  EXPECT_EQ(index.Propose(1), (std::vector<int32_t>{4}));
  const std::vector<int32_t> b = {9, 8, 9, 8};  // another request in the same slot
  index.Sync(b);
  EXPECT_EQ(index.size(), 4u);
  EXPECT_EQ(index.Propose(2), (std::vector<int32_t>{9, 8}));
  index.Sync(std::vector<int32_t>{9, 8});  // shorter: rebuilt
  EXPECT_EQ(index.size(), 2u);
  EXPECT_TRUE(index.Propose(2).empty());
}

TEST(NgramIndex, BadLengthsAreRejected) {
  EXPECT_THROW(NgramIndex(0, 3), Error);
  EXPECT_THROW(NgramIndex(4, 3), Error);
  EXPECT_THROW(NgramIndex(2, 65), Error);
}

// A model drafter that proposes `next` tokens (history.back() + 1, + 2, ...) and records what
// it was asked.
class CountingDrafter : public Drafter {
 public:
  void Draft(const DraftRequest& r, const KvCache&, DraftResult& out) override {
    out.Clear();
    last = r.last;
    pos = r.pos;
    hidden = r.hidden;
    history.assign(r.history.begin(), r.history.end());
    for (int i = 0; i < r.n_max; ++i) {
      out.tokens.push_back(r.history.back() + 1 + i);
      if (r.sampler) out.q.push_back({0.5f, 0.5f});
    }
    out.steps = r.n_max;
  }
  double BytesPerStep() const override { return 1.0; }
  int32_t last = -1, pos = -1;
  const float* hidden = nullptr;
  std::vector<int32_t> history;
};

TEST(ChainDrafter, LookupFirstThenTheModelExtendsFromTheLastLookupToken) {
  CountingDrafter model;
  ChainDrafter chain(&model);
  const std::vector<int32_t> history = {5, 6, 7, 8, 5, 6}, lookup = {7, 8};
  const float hidden[2] = {1, 2};
  DraftRequest r;
  r.last = 6;
  r.pos = 5;
  r.hidden = hidden;
  r.history = history;
  r.lookup = lookup;
  r.n_max = 5;
  DraftResult out;
  const KvCache no_cache({}, KvCacheOptions{});  // not read by these drafters
  chain.Draft(r, no_cache, out);
  EXPECT_EQ(out.tokens, (std::vector<int32_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(out.n_lookup, 2);
  EXPECT_EQ(out.steps, 3);
  // The model extends the last lookup token, with the target's hidden of the verified row at
  // the committed position, its history holding the lookup tokens.
  EXPECT_EQ(model.last, 8);
  EXPECT_EQ(model.pos, 5);
  EXPECT_EQ(model.hidden, hidden);
  EXPECT_EQ(model.history, (std::vector<int32_t>{5, 6, 7, 8, 5, 6, 7, 8}));

  // Sampled: point masses (empty q) for lookup tokens, the model's q after them.
  Rng rng(1);
  Sampler sampler(SamplingParams{});
  r.sampler = &sampler;
  r.rng = &rng;
  chain.Draft(r, no_cache, out);
  ASSERT_EQ(out.q.size(), 5u);
  EXPECT_TRUE(out.q[0].empty() && out.q[1].empty());
  EXPECT_EQ(out.q[2].size(), 2u);

  // No lookup: the model drafts from the last committed token.
  r.lookup = {};
  chain.Draft(r, no_cache, out);
  EXPECT_EQ(model.last, 6);
  EXPECT_EQ(out.n_lookup, 0);
  EXPECT_EQ(out.tokens.size(), 5u);
}

TEST(ChainDrafter, LookupOnlyAndDraftMin) {
  ChainDrafter lookup_only(nullptr);
  const std::vector<int32_t> history = {1, 1, 1}, lookup = {1, 1, 1};
  DraftRequest r;
  r.history = history;
  r.lookup = lookup;
  r.n_max = 2;  // the lookup is cut to n_max
  DraftResult out;
  const KvCache no_cache({}, KvCacheOptions{});
  lookup_only.Draft(r, no_cache, out);
  EXPECT_EQ(out.tokens, (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(out.steps, 0);
  EXPECT_TRUE(out.q.empty());  // greedy: no distributions
  r.n_max = 3;
  r.n_min = 4;  // fewer than n_min proposed: none
  lookup_only.Draft(r, no_cache, out);
  EXPECT_TRUE(out.tokens.empty());
  EXPECT_EQ(out.n_lookup, 0);
}

}  // namespace
}  // namespace tandem
