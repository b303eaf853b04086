// Tests for each sampler stage alone on hand-made logits, with exact expected results.
#include "sampling/sampling_stages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "base/error.h"

namespace tandem::sampling {
namespace {

std::vector<int32_t> Ids(const CandidateList& list) {
  std::vector<int32_t> ids;
  for (const Candidate& c : list.items) ids.push_back(c.id);
  return ids;
}

// Ids in ascending order, for stages whose output order is unspecified.
std::vector<int32_t> SortedIds(const CandidateList& list) {
  std::vector<int32_t> ids = Ids(list);
  std::sort(ids.begin(), ids.end());
  return ids;
}

CandidateList ListOf(const std::vector<float>& logits) {
  CandidateList list;
  CollectCandidates(logits, list);
  return list;
}

// Logits whose softmax is {0.5, 0.3, 0.15, 0.05}.
std::vector<float> FourTokenLogits() {
  return {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
}

TEST(LogitBiasTest, AddsInOrderAndBans) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  const std::vector<LogitBias> bias = {
      {.token = 0, .bias = 0.5f}, {.token = 0, .bias = 0.25f}, {.token = 2, .bias = -INFINITY}};
  ApplyLogitBias(logits, bias);
  EXPECT_EQ(logits, (std::vector<float>{1.75f, 2.0f, -INFINITY}));
}

TEST(LogitBiasTest, TokenOutsideVocabularyThrows) {
  std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  const std::vector<LogitBias> bias = {{.token = 3, .bias = 1.0f}};
  EXPECT_THROW(ApplyLogitBias(logits, bias), Error);
}

TEST(PenaltiesTest, RepeatFrequencyPresenceOverTheWindow) {
  SamplingParams params;
  params.repeat_penalty = 2.0f;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 0.25f;
  params.repeat_last_n = 4;
  const std::vector<int32_t> history = {4, 0, 1, 0, 2};  // window: 0, 1, 0, 2
  std::vector<int32_t> scratch;

  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, 4.0f};
  ApplyPenalties(logits, history, params, scratch);
  // 0: 2/2 - (2*0.5 + 0.25); 1: -1*2 - 0.75; 2: 0.5/2 - 0.75; 3 unseen; 4 outside the window.
  EXPECT_EQ(logits, (std::vector<float>{-0.25f, -2.75f, -0.5f, 3.0f, 4.0f}));

  params.repeat_last_n = -1;  // whole history: token 4 too
  logits = {2.0f, -1.0f, 0.5f, 3.0f, 4.0f};
  ApplyPenalties(logits, history, params, scratch);
  EXPECT_EQ(logits, (std::vector<float>{-0.25f, -2.75f, -0.5f, 3.0f, 1.25f}));

  params.repeat_last_n = 0;  // off
  logits = {2.0f, -1.0f, 0.5f, 3.0f, 4.0f};
  ApplyPenalties(logits, history, params, scratch);
  EXPECT_EQ(logits, (std::vector<float>{2.0f, -1.0f, 0.5f, 3.0f, 4.0f}));

  params.repeat_last_n = 100;  // longer than the history: all of it
  logits = {2.0f, -1.0f, 0.5f, 3.0f, 4.0f};
  ApplyPenalties(logits, history, params, scratch);
  EXPECT_EQ(logits, (std::vector<float>{-0.25f, -2.75f, -0.5f, 3.0f, 1.25f}));
}

TEST(PenaltiesTest, NegativePresenceRewardsAndBannedStaysBanned) {
  SamplingParams params;
  params.repeat_penalty = 1.5f;
  params.presence_penalty = -1.0f;  // negative presence encourages repeats
  std::vector<float> logits = {0.0f, -INFINITY};
  const std::vector<int32_t> history = {0, 1};
  std::vector<int32_t> scratch;
  ApplyPenalties(logits, history, params, scratch);
  EXPECT_EQ(logits, (std::vector<float>{1.0f, -INFINITY}));
}

TEST(PenaltiesTest, HistoryTokenOutsideVocabularyThrows) {
  SamplingParams params;
  params.repeat_penalty = 1.1f;
  std::vector<float> logits = {0.0f, 1.0f};
  const std::vector<int32_t> history = {1, 2};
  std::vector<int32_t> scratch;
  EXPECT_THROW(ApplyPenalties(logits, history, params, scratch), Error);
}

TEST(CheckLogitsTest, NanAndPlusInfinityThrowMinusInfinityPasses) {
  EXPECT_NO_THROW(CheckLogits(std::vector<float>{1.0f, -INFINITY}));
  EXPECT_THROW(CheckLogits(std::vector<float>{1.0f, NAN}), Error);
  EXPECT_THROW(CheckLogits(std::vector<float>{INFINITY, 1.0f}), Error);
}

TEST(TopKTest, KeepsTheKLargestTiesToLowestId) {
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 3.0f, 0.0f};
  for (int32_t k : {1, 2, 3}) {
    CandidateList collected = ListOf(logits);
    TopK(collected, k);
    CandidateList selected;
    SelectTopK(logits, k, selected);
    const std::vector<int32_t> best = {1, 3, 2};  // Before order of the top three
    const std::vector<int32_t> expected(best.begin(), best.begin() + k);
    EXPECT_EQ(Ids(collected), expected) << "k=" << k;
    EXPECT_EQ(Ids(selected), expected) << "k=" << k;
    EXPECT_TRUE(selected.sorted);
  }
}

TEST(TopKTest, ZeroOrLargeKIsNoOpAndBannedTokensAreNotCandidates) {
  const std::vector<float> logits = {-INFINITY, 5.0f, -INFINITY, 1.0f};
  for (int32_t k : {0, 4, 10}) {
    CandidateList selected;
    SelectTopK(logits, k, selected);
    EXPECT_EQ(Ids(selected).size(), 2u);
  }
  CandidateList selected;
  SelectTopK(logits, 3, selected);
  EXPECT_EQ(Ids(selected), (std::vector<int32_t>{1, 3}));
}

TEST(TopPTest, KeepsTheShortestPrefixReachingP) {
  // Cumulative: 0.5, 0.8, 0.95, 1.0.
  const struct {
    float p;
    int32_t min_keep;
    std::vector<int32_t> expected;
  } cases[] = {{0.4f, 0, {0}},           {0.75f, 0, {0, 1}},   {0.85f, 0, {0, 1, 2}},
               {0.97f, 0, {0, 1, 2, 3}}, {0.4f, 3, {0, 1, 2}}, {1.0f, 0, {0, 1, 2, 3}}};
  for (const auto& c : cases) {
    for (bool presorted : {false, true}) {
      CandidateList list = ListOf(FourTokenLogits());
      list.sorted = presorted;  // id order is already Before order here
      TopP(list, c.p, c.min_keep);
      EXPECT_EQ(SortedIds(list), c.expected)
          << "p=" << c.p << " min_keep=" << c.min_keep << " sorted=" << presorted;
    }
  }
}

TEST(TopPTest, OneKeepsEvenNegligibleTokens) {
  CandidateList list = ListOf({0.0f, -200.0f, -1000.0f});
  TopP(list, 1.0f, 0);
  EXPECT_EQ(Ids(list).size(), 3u);
}

TEST(TopPTest, UnsortedInputAndALongPrefix) {
  // Shuffled order gives the same prefix.
  const std::vector<float> four = FourTokenLogits();
  CandidateList shuffled = ListOf({four[2], four[0], four[3], four[1]});
  TopP(shuffled, 0.75f, 0);
  EXPECT_EQ(SortedIds(shuffled), (std::vector<int32_t>{1, 3}));
  // 5000 equal logits: the prefix grows past the first sorted chunk; ties keep the lowest ids.
  CandidateList flat = ListOf(std::vector<float>(5000, 0.25f));
  TopP(flat, 0.9f, 0);
  ASSERT_EQ(flat.items.size(), 4500u);
  for (int32_t i = 0; i < 4500; ++i) EXPECT_EQ(flat.items[i].id, i);
}

TEST(MinPTest, KeepsTokensAboveAFractionOfTheMax) {
  const struct {
    float min_p;
    int32_t min_keep;
    size_t expected;
  } cases[] = {{0.2f, 0, 3}, {0.32f, 0, 2}, {0.0f, 0, 4},
               {1.0f, 0, 1}, {1.0f, 3, 3},  {0.09f, 0, 4}};
  for (const auto& c : cases) {
    for (bool presorted : {false, true}) {
      CandidateList list = ListOf(FourTokenLogits());
      list.sorted = presorted;  // id order is already Before order here
      MinP(list, c.min_p, c.min_keep);
      std::vector<int32_t> expected;
      for (int32_t i = 0; i < static_cast<int32_t>(c.expected); ++i) expected.push_back(i);
      EXPECT_EQ(Ids(list), expected) << "min_p=" << c.min_p << " sorted=" << presorted;
    }
  }
}

TEST(MinPTest, UnsortedFilterKeepsOrder) {
  const std::vector<float> four = FourTokenLogits();
  CandidateList list = ListOf({four[3], four[0], four[2], four[1]});
  MinP(list, 0.2f, 0);  // drops the 0.05 token (id 0), keeps ids 1, 2, 3 in list order
  EXPECT_EQ(Ids(list), (std::vector<int32_t>{1, 2, 3}));
}

TEST(WriteSoftmaxTest, TemperatureScalesLogits) {
  const CandidateList list = ListOf({0.0f, std::log(3.0f), -INFINITY});
  std::vector<float> probs(4, 7.0f);
  WriteSoftmax(list, 1.0f, probs);
  EXPECT_NEAR(probs[0], 0.25f, 1e-7);
  EXPECT_NEAR(probs[1], 0.75f, 1e-7);
  EXPECT_EQ(probs[2], 0.0f);
  EXPECT_EQ(probs[3], 0.0f);
  WriteSoftmax(list, 0.5f, probs);  // p ∝ {1, 9}
  EXPECT_NEAR(probs[0], 0.1f, 1e-7);
  EXPECT_NEAR(probs[1], 0.9f, 1e-7);
  WriteSoftmax(list, 2.0f, probs);  // p ∝ {1, sqrt(3)}
  EXPECT_NEAR(probs[0], 1.0 / (1.0 + std::sqrt(3.0)), 1e-7);
}

TEST(CandidateListTest, TheKnownMaxStaysTheListsMaxDownTheChain) {
  // CollectCandidates records the max; TopP and MinP (unsorted paths) rely on every stage keeping
  // the best candidate. Checked against the items themselves after each stage.
  std::mt19937 rng(4);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const auto check = [](const CandidateList& list, const char* after) {
    if (!list.max_known || list.items.empty()) return;
    float max = -INFINITY;
    for (const Candidate& c : list.items) max = std::max(max, c.logit);
    EXPECT_EQ(list.max_logit, max) << "after " << after;
  };
  for (int round = 0; round < 200; ++round) {
    std::vector<float> logits(1 + rng() % 5000);
    for (float& v : logits) v = rng() % 7 == 0 ? -INFINITY : normal(rng);
    CandidateList list;
    CollectCandidates(logits, list);
    check(list, "CollectCandidates");
    TopP(list, 0.5f + 0.5f * static_cast<float>(rng() % 100) / 100.0f, 1 + rng() % 3);
    check(list, "TopP");
    MinP(list, static_cast<float>(rng() % 30) / 100.0f, 1 + rng() % 3);
    check(list, "MinP");
  }
}

}  // namespace
}  // namespace tandem::sampling
