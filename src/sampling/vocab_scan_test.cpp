// The block scans (vocab_scan.h) and the sampler paths built on them, against the plain
// element-by-element loops they replace, on rows full of the values that trip such loops up:
// NaN, +-inf, +-0, ties, and special values on either side of a block boundary.
#include "sampling/vocab_scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/error.h"
#include "sampling/sampler.h"
#include "sampling/sampling_stages.h"

namespace tandem::sampling {
namespace {

float PlainMax(const std::vector<float>& x) {
  float max = -INFINITY;
  for (float v : x) max = v > max ? v : max;
  return max;
}

int32_t PlainArgmax(const std::vector<float>& x) {
  int32_t best = -1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isnan(x[i]) && (best < 0 || x[i] > x[best])) best = static_cast<int32_t>(i);
  }
  return best;
}

// A row of n values drawn from a few levels (so ties are common) with specials sprinkled in.
std::vector<float> TrickyRow(size_t n, std::mt19937& rng, bool specials) {
  const float levels[] = {-3.0f, -1.0f, 0.0f, -0.0f, 0.5f, 2.0f, 2.0f, 7.0f};
  const float special[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f};
  std::vector<float> x(n);
  for (float& v : x) v = levels[rng() % 8] + static_cast<float>(rng() % 4) * 0.25f;
  if (specials) {
    for (size_t k = 0; k < n / 8 + 1 && n > 0; ++k) x[rng() % n] = special[rng() % 5];
  }
  return x;
}

TEST(VocabScanTest, EveryScanIsThePlainLoopsAnswer) {
  std::mt19937 rng(5);
  for (int round = 0; round < 3000; ++round) {
    const size_t n = round < 2900 ? rng() % 70 : 262144;
    const std::vector<float> x = TrickyRow(n, rng, round % 3 != 0);
    SCOPED_TRACE(::testing::Message() << "round " << round << ", n = " << n);
    EXPECT_EQ(MaxIgnoringNan(x), PlainMax(x));  // (+0 and -0 compare equal, as Argmax needs)
    bool below = true;
    for (float v : x) below &= v < INFINITY;
    EXPECT_EQ(AllBelowInfinity(x), below);
    bool finite = true;
    for (float v : x) finite &= std::isfinite(v);
    EXPECT_EQ(AllBelowInfinity(x, /*finite=*/true), finite);
    if (n > 0) {
      const float target = x[rng() % n];
      const size_t first = std::find(x.begin(), x.end(), target) - x.begin();
      EXPECT_EQ(FirstEqual(x, target), first);  // x.size() for a NaN target, as find
    }
    std::vector<float> sparse(n, 0.0f);
    for (size_t k = 0; k < n / 20 + 1 && n > 0; ++k) {
      sparse[rng() % n] = (rng() % 2 ? 1e-30f : 0.25f) * static_cast<float>(1 + rng() % 9);
    }
    if (n > 0 && round % 2) sparse[rng() % n] = -0.0f;
    double total = 0.0;
    for (float v : sparse) total += v;
    const double sum = SumInOrder(sparse);
    EXPECT_EQ(std::memcmp(&sum, &total, sizeof sum), 0) << sum << " vs " << total;
    const int32_t plain_argmax = PlainArgmax(x);
    if (plain_argmax < 0) {
      EXPECT_THROW(Argmax(x), Error);
    } else {
      EXPECT_EQ(Argmax(x), plain_argmax);
    }
  }
}

TEST(VocabScanTest, BlockIsZeroTakesMinusZeroAndNothingElse) {
  std::vector<float> block(kScanBlock, 0.0f);
  EXPECT_TRUE(BlockIsZero(block.data()));
  block[3] = -0.0f;
  EXPECT_TRUE(BlockIsZero(block.data()));
  for (size_t j = 0; j < kScanBlock; ++j) {
    for (float v : {1e-45f, -1e-45f, NAN, INFINITY, 1.0f}) {
      std::vector<float> b(kScanBlock, 0.0f);
      b[j] = v;
      EXPECT_FALSE(BlockIsZero(b.data())) << "lane " << j << " = " << v;
    }
  }
}

TEST(VocabScanTest, SelectTopKSkippingBlocksKeepsTheHeapsAnswer) {
  // The block skip against a heap-free oracle: collect everything, keep the k best.
  std::mt19937 rng(9);
  for (int round = 0; round < 400; ++round) {
    const size_t n = 1 + rng() % 300;  // k < n in most rounds: the heap path
    std::vector<float> x = TrickyRow(n, rng, false);
    for (size_t k = 0; k < n / 5; ++k) x[rng() % n] = -INFINITY;
    const auto k = static_cast<int32_t>(1 + rng() % 40);
    CandidateList heap, oracle;
    SelectTopK(x, k, heap);
    CollectCandidates(x, oracle);
    TopK(oracle, k);
    // (k >= n leaves both unsorted, in id order.)
    std::sort(oracle.items.begin(), oracle.items.end(), Before);
    std::sort(heap.items.begin(), heap.items.end(), Before);
    ASSERT_EQ(heap.items.size(), oracle.items.size()) << "round " << round;
    for (size_t i = 0; i < heap.items.size(); ++i) {
      EXPECT_EQ(heap.items[i].id, oracle.items[i].id) << "round " << round << ", rank " << i;
    }
  }
}

TEST(VocabScanTest, GreedySampleIsSampleFromOfItsDistributionWithTheSameDraws) {
  SamplingParams params;
  params.temperature = 0.0f;
  Sampler sampler(params);
  std::mt19937 gen(3);
  Rng fast(17), slow(17);
  for (int round = 0; round < 200; ++round) {
    std::vector<float> logits = TrickyRow(1000 + gen() % 100, gen, false);
    std::vector<float> probs(logits.size()), expected(logits.size());
    const auto n = static_cast<int>(logits.size());
    const int32_t token = sampler.Sample(logits.data(), n, {}, fast, probs);
    sampler.Distribution(logits.data(), n, {}, expected);
    EXPECT_EQ(token, SampleFrom(expected, slow));
    EXPECT_EQ(probs, expected);
    EXPECT_EQ(fast.draw_index(), slow.draw_index());
  }
}

}  // namespace
}  // namespace tandem::sampling
