// ComputeLogprobs against a long-double full-sort oracle, ties, clamping and bad input.
#include "sampling/logprobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "base/error.h"
#include "sampling/rng.h"

namespace tandem {
namespace {

TEST(Logprobs, MatchesAFullSortOracle) {
  Rng rng(7, 0);
  const int n = 5000;
  std::vector<float> logits(n);
  for (float& x : logits) x = static_cast<float>(rng.Uniform() * 40.0 - 20.0);
  TokenLogprobs out;
  ComputeLogprobs(logits.data(), n, 123, 20, out);

  long double sum = 0;
  for (const float x : logits) sum += std::exp(static_cast<long double>(x));
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  const auto oracle = [&](int32_t i) { return static_cast<double>(logits[i] - std::log(sum)); };
  EXPECT_EQ(out.chosen.token, 123);
  EXPECT_NEAR(out.chosen.logprob, oracle(123), 1e-4);
  ASSERT_EQ(out.top.size(), 20u);
  for (int r = 0; r < 20; ++r) {
    EXPECT_EQ(out.top[r].token, order[r]);
    EXPECT_NEAR(out.top[r].logprob, oracle(order[r]), 1e-4);
  }
}

TEST(Logprobs, TopNAmongManyTiesIsTheStableSortsPrefix) {
  // Few distinct logits over rows longer than a scan block: the top-n scan skips whole blocks
  // that cannot enter, and must still keep the lowest ids among equal logits.
  Rng rng(11, 0);
  for (int round = 0; round < 100; ++round) {
    const int n = 1 + static_cast<int>(rng.Uniform() * 3000);
    std::vector<float> logits(n);
    for (float& x : logits) x = static_cast<float>(static_cast<int>(rng.Uniform() * 6)) - 3.0f;
    const int n_top = 1 + static_cast<int>(rng.Uniform() * 40);
    TokenLogprobs out;
    ComputeLogprobs(logits.data(), n, 0, n_top, out);
    std::vector<int32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
    ASSERT_EQ(out.top.size(), static_cast<size_t>(std::min(n, n_top))) << "round " << round;
    for (size_t r = 0; r < out.top.size(); ++r) {
      EXPECT_EQ(out.top[r].token, order[r]) << "round " << round << ", rank " << r;
    }
  }
}

TEST(Logprobs, TiesGoToTheLowerIdAndNIsClamped) {
  const std::vector<float> logits = {1.0f, 3.0f, 3.0f, 0.0f};
  TokenLogprobs out;
  ComputeLogprobs(logits.data(), 4, 0, 10, out);
  ASSERT_EQ(out.top.size(), 4u);
  EXPECT_EQ(out.top[0].token, 1);
  EXPECT_EQ(out.top[1].token, 2);
  EXPECT_EQ(out.top[2].token, 0);
  EXPECT_EQ(out.top[3].token, 3);
  EXPECT_FLOAT_EQ(out.top[0].logprob, out.top[1].logprob);
  EXPECT_EQ(out.chosen.logprob, out.top[2].logprob);
  ComputeLogprobs(logits.data(), 4, 2, 0, out);
  EXPECT_TRUE(out.top.empty());
}

TEST(Logprobs, RejectsBadInput) {
  std::vector<float> logits = {0.0f, 1.0f};
  TokenLogprobs out;
  EXPECT_THROW(ComputeLogprobs(logits.data(), 2, 2, 1, out), Error);
  EXPECT_THROW(ComputeLogprobs(logits.data(), 0, 0, 1, out), Error);
  logits[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(ComputeLogprobs(logits.data(), 2, 0, 1, out), Error);
}

}  // namespace
}  // namespace tandem
