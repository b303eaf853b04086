// Tests for the whole sampler chain: order of the stages, greedy, determinism, a 262k-token
// vocabulary against a plain full-sort oracle, and bad input.
#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"

namespace tandem {
namespace {

using sampling::Before;
using sampling::Candidate;

SamplingParams Neutral(float temperature = 1.0f) {
  SamplingParams params;
  params.temperature = temperature;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  return params;
}

std::vector<float> Probs(const SamplingParams& params, const std::vector<float>& logits,
                         const std::vector<int32_t>& history = {}) {
  Sampler sampler(params);
  return sampler.Distribution(logits.data(), static_cast<int>(logits.size()), history);
}

std::vector<float> OneHot(size_t n, size_t at) {
  std::vector<float> v(n, 0.0f);
  v[at] = 1.0f;
  return v;
}

TEST(SamplerTest, GreedyIsOneHotOnTheFirstMaximum) {
  EXPECT_EQ(Probs(Neutral(0.0f), {1.0f, 3.0f, 2.0f, 3.0f}), OneHot(4, 1));
  EXPECT_EQ(Probs(Neutral(-1.0f), {5.0f, 3.0f, 5.0f}), OneHot(3, 0));
  // Greedy ignores the filters, which could never remove the argmax anyway.
  SamplingParams params;
  params.temperature = 0.0f;
  EXPECT_EQ(Probs(params, {-1.0f, -0.5f, -3.0f}), OneHot(3, 1));
}

TEST(SamplerTest, LogitBiasBansAndBoosts) {
  SamplingParams params = Neutral(0.0f);
  params.logit_bias = {{.token = 1, .bias = -INFINITY}};
  EXPECT_EQ(Probs(params, {1.0f, 3.0f, 2.0f}), OneHot(3, 2));
  params.logit_bias = {{.token = 0, .bias = 2.5f}};
  EXPECT_EQ(Probs(params, {1.0f, 3.0f, 2.0f}), OneHot(3, 0));
  // Sampling: a banned token has probability exactly 0; the rest renormalise.
  params = Neutral(1.0f);
  params.logit_bias = {{.token = 1, .bias = -INFINITY}};
  const std::vector<float> probs = Probs(params, {0.0f, 9.0f, 0.0f});
  EXPECT_EQ(probs[1], 0.0f);
  EXPECT_FLOAT_EQ(probs[0], 0.5f);
  EXPECT_FLOAT_EQ(probs[2], 0.5f);
}

TEST(SamplerTest, PenaltiesReadOnlyTheWindow) {
  SamplingParams params = Neutral(0.0f);
  params.presence_penalty = 2.0f;
  params.repeat_last_n = 2;
  const std::vector<float> logits = {3.0f, 2.0f, 0.0f};
  EXPECT_EQ(Probs(params, logits, {0, 2, 2}), OneHot(3, 0));  // token 0 is outside the window
  EXPECT_EQ(Probs(params, logits, {2, 0, 2}), OneHot(3, 1));  // inside: 3 - 2 < 2
  params.repeat_last_n = 0;
  EXPECT_EQ(Probs(params, logits, {2, 0, 2}), OneHot(3, 0));
}

TEST(SamplerTest, FiltersSeeTemperatureOneAndTemperatureComesLast) {
  // softmax = {0.5, 0.3, 0.15, 0.05}; top_p 0.75 keeps two tokens at T = 1. Were temperature 10
  // applied first, the flattened distribution would need all four.
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.15f),
                                     std::log(0.05f)};
  SamplingParams params = Neutral(10.0f);
  params.top_p = 0.75f;
  const std::vector<float> probs = Probs(params, logits);
  EXPECT_GT(probs[0], 0.0f);
  EXPECT_GT(probs[1], 0.0f);
  EXPECT_EQ(probs[2], 0.0f);
  EXPECT_EQ(probs[3], 0.0f);
  EXPECT_NEAR(probs[0] / probs[1], std::pow(0.5 / 0.3, 0.1), 1e-6);
  // min_p likewise: 0.2 * 0.5 = 0.1 drops only the 0.05 token, whatever the temperature.
  params = Neutral(0.05f);
  params.min_p = 0.2f;
  const std::vector<float> cold = Probs(params, logits);
  EXPECT_GT(cold[2], 0.0f);
  EXPECT_EQ(cold[3], 0.0f);
}

TEST(SamplerTest, TemperatureToZeroApproachesGreedy) {
  const std::vector<float> logits = {1.0f, 2.0f, 1.5f, -4.0f};
  float previous = 0.0f;
  for (float t : {2.0f, 1.0f, 0.5f, 0.1f, 0.02f}) {
    const std::vector<float> probs = Probs(Neutral(t), logits);
    EXPECT_GT(probs[1], previous) << "t=" << t;
    previous = probs[1];
  }
  EXPECT_GT(previous, 0.99999f);
  // Extreme but valid temperatures stay finite: one-hot-like when tiny, uniform when huge.
  EXPECT_EQ(Probs(Neutral(1e-30f), logits), OneHot(4, 1));
  for (float p : Probs(Neutral(1e30f), logits)) EXPECT_FLOAT_EQ(p, 0.25f);
  EXPECT_EQ(Argmax(Probs(Neutral(0.02f), logits)), Argmax(Probs(Neutral(0.0f), logits)));
}

TEST(SamplerTest, DefaultChainOnHandMadeLogits) {
  // 50 tokens: logit i / 10 for token i. top_k 40 keeps 10..49; top_p 0.95 keeps the 27 best
  // (23..49, cumulative 0.9502); min_p 0.05 (logit >= 4.9 + log 0.05 = 1.904) would keep 20..49;
  // temperature 0.8 then reshapes 23..49.
  std::vector<float> logits(50);
  for (int i = 0; i < 50; ++i) logits[i] = static_cast<float>(i) / 10.0f;
  const std::vector<float> probs = Probs(SamplingParams{}, logits);
  double expected_total = 0.0;
  for (int i = 23; i < 50; ++i) expected_total += std::exp((logits[i] - 4.9) / 0.8);
  for (int i = 0; i < 50; ++i) {
    const double expected = i < 23 ? 0.0 : std::exp((logits[i] - 4.9) / 0.8) / expected_total;
    EXPECT_NEAR(probs[i], expected, 1e-6) << "token " << i;
  }
}

// --- a 262k vocabulary against a plain oracle ------------------------------------------------

// The chain written the obvious way: full sort, then each filter on the sorted list, then
// softmax; min_p compared in probability space. Bias and penalties are tested on their own.
std::vector<float> Oracle(const SamplingParams& params, const std::vector<float>& logits) {
  std::vector<Candidate> c;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (logits[i] != -INFINITY) c.push_back({logits[i], static_cast<int32_t>(i)});
  }
  std::sort(c.begin(), c.end(), Before);
  const auto softmax = [](const std::vector<Candidate>& list, double t) {
    std::vector<double> p;
    double total = 0.0;
    for (const Candidate& x : list) total += std::exp((x.logit - list[0].logit) / t);
    for (const Candidate& x : list) p.push_back(std::exp((x.logit - list[0].logit) / t) / total);
    return p;
  };
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < c.size()) c.resize(params.top_k);
  if (params.top_p < 1.0f) {
    const std::vector<double> p = softmax(c, 1.0);
    double cumulative = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
      cumulative += p[i];
      if (cumulative >= params.top_p) {
        c.resize(i + 1);
        break;
      }
    }
  }
  if (params.min_p > 0.0f) {
    const std::vector<double> p = softmax(c, 1.0);
    size_t keep = 1;
    while (keep < c.size() && p[keep] >= params.min_p * p[0]) ++keep;
    c.resize(keep);
  }
  const std::vector<double> p = softmax(c, params.temperature);
  std::vector<float> probs(logits.size(), 0.0f);
  for (size_t i = 0; i < c.size(); ++i) probs[c[i].id] = static_cast<float>(p[i]);
  return probs;
}

// Gaussian-ish logits (sum of 4 uniforms, scaled) so the top of the vocabulary is a long tail.
std::vector<float> RandomLogits(size_t n, uint64_t seed, float scale) {
  Rng rng(seed);
  std::vector<float> logits(n);
  for (float& x : logits) {
    x = static_cast<float>((rng.Uniform() + rng.Uniform() + rng.Uniform() + rng.Uniform() - 2.0) *
                           scale);
  }
  return logits;
}

TEST(SamplerTest, LargeVocabularyMatchesTheOracle) {
  constexpr size_t kVocab = 262144;
  const struct {
    int32_t top_k;
    float top_p, min_p, temperature, scale;
  } cases[] = {
      {40, 0.95f, 0.05f, 0.8f, 6.0f},  // llama.cpp defaults
      {0, 0.9f, 0.0f, 1.0f, 6.0f},     // nucleus over the whole vocabulary
      {0, 1.0f, 0.01f, 1.5f, 6.0f},    // min-p alone (unsorted filter)
      {1000, 0.5f, 0.0f, 0.7f, 6.0f},  // large k
      {0, 0.95f, 0.0f, 0.7f, 0.5f},    // nearly flat: top-p needs most of the vocabulary
      {0, 1.0f, 0.0f, 1.0f, 6.0f},     // no filter at all
  };
  for (const auto& c : cases) {
    SamplingParams params;
    params.top_k = c.top_k;
    params.top_p = c.top_p;
    params.min_p = c.min_p;
    params.temperature = c.temperature;
    const std::vector<float> logits = RandomLogits(kVocab, 99, c.scale);
    const std::vector<float> probs = Probs(params, logits);
    const std::vector<float> expected = Oracle(params, logits);
    size_t kept = 0, mismatched = 0;
    double total = 0.0;
    for (size_t i = 0; i < kVocab; ++i) {
      kept += probs[i] > 0.0f;
      mismatched += (probs[i] > 0.0f) != (expected[i] > 0.0f);
      total += probs[i];
      if (std::abs(probs[i] - expected[i]) > 1e-6f + 1e-5f * expected[i]) {
        ADD_FAILURE() << "token " << i << ": " << probs[i] << " vs " << expected[i];
        break;
      }
    }
    EXPECT_EQ(mismatched, 0u) << "k=" << c.top_k << " p=" << c.top_p << " min_p=" << c.min_p;
    EXPECT_GT(kept, 0u);
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
}

TEST(SamplerTest, BitwiseDeterministicWhateverRanBefore) {
  const std::vector<float> logits = RandomLogits(50000, 5, 4.0f);
  SamplingParams params;
  params.repeat_penalty = 1.3f;
  params.frequency_penalty = 0.2f;
  const std::vector<int32_t> history = {7, 7, 123, 49999, 0};
  Sampler fresh(params);
  const std::vector<float> first = fresh.Distribution(logits.data(), 50000, history);
  Sampler used(params);
  const std::vector<float> other = RandomLogits(70000, 6, 1.0f);
  used.Distribution(other.data(), 70000, {});  // leaves larger scratch buffers behind
  const std::vector<float> second = used.Distribution(logits.data(), 50000, history);
  ASSERT_EQ(first.size(), second.size());
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0);
}

TEST(SamplerTest, BadInputThrows) {
  Sampler sampler(Neutral(1.0f));
  const std::vector<float> ok = {1.0f, 2.0f};
  std::vector<float> probs(2);
  EXPECT_THROW(sampler.Distribution(ok.data(), 0, {}, probs), Error);
  EXPECT_THROW(sampler.Distribution(ok.data(), 2, {}, std::span<float>(probs.data(), 1)), Error);
  const std::vector<float> nan = {1.0f, NAN};
  EXPECT_THROW(sampler.Distribution(nan.data(), 2, {}, probs), Error);
  const std::vector<float> banned = {-INFINITY, -INFINITY};
  EXPECT_THROW(sampler.Distribution(banned.data(), 2, {}, probs), Error);
  Sampler greedy(Neutral(0.0f));
  EXPECT_THROW(greedy.Distribution(banned.data(), 2, {}, probs), Error);
  SamplingParams bias = Neutral(1.0f);
  bias.logit_bias = {{.token = 2, .bias = 1.0f}};
  Sampler biased(bias);
  EXPECT_THROW(biased.Distribution(ok.data(), 2, {}, probs), Error);
  SamplingParams penalty = Neutral(1.0f);
  penalty.repeat_penalty = 1.2f;
  Sampler penalised(penalty);
  const std::vector<int32_t> history = {0, 5};
  EXPECT_THROW(penalised.Distribution(ok.data(), 2, history, probs), Error);
  SamplingParams invalid;
  invalid.top_p = 2.0f;
  EXPECT_THROW(Sampler{invalid}, Error);
}

}  // namespace
}  // namespace tandem
