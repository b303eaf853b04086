// Google Benchmark: the sampler chain on Gemma's 262,144-token vocabulary.
#include <benchmark/benchmark.h>

#include <vector>

#include "sampling/logprobs.h"
#include "sampling/sampler.h"
#include "speculative/speculative_accept.h"

namespace tandem {
namespace {

constexpr int kVocab = 262144;

std::vector<float> Logits(float scale) {
  Rng rng(1);
  std::vector<float> logits(kVocab);
  for (float& x : logits) {
    x = static_cast<float>((rng.Uniform() + rng.Uniform() + rng.Uniform() + rng.Uniform() - 2.0) *
                           scale);
  }
  return logits;
}

// Args: top_k, top_p * 100, min_p * 100, temperature * 100, logit scale (6 = peaked, 1 = flat).
void BM_Distribution(benchmark::State& state) {
  SamplingParams params;
  params.top_k = static_cast<int32_t>(state.range(0));
  params.top_p = state.range(1) / 100.0f;
  params.min_p = state.range(2) / 100.0f;
  params.temperature = state.range(3) / 100.0f;
  const std::vector<float> logits = Logits(static_cast<float>(state.range(4)));
  Sampler sampler(params);
  std::vector<float> probs(kVocab);
  std::vector<int32_t> history(64, 7);
  for (auto _ : state) {
    sampler.Distribution(logits.data(), kVocab, history, probs);
    benchmark::DoNotOptimize(probs.data());
  }
}
BENCHMARK(BM_Distribution)
    ->ArgNames({"top_k", "top_p", "min_p", "temp", "scale"})
    ->Args({40, 95, 5, 80, 6})   // llama.cpp defaults
    ->Args({0, 100, 0, 0, 6})    // greedy
    ->Args({0, 95, 5, 80, 6})    // no top-k, peaked logits
    ->Args({0, 95, 0, 80, 1})    // no top-k, flat logits: top-p sorts most of the vocabulary
    ->Args({0, 100, 0, 100, 6})  // plain softmax over everything
    ->Unit(benchmark::kMicrosecond);

void BM_Logprobs(benchmark::State& state) {
  const std::vector<float> logits = Logits(6);
  TokenLogprobs out;
  for (auto _ : state) {
    ComputeLogprobs(logits.data(), kVocab, 7, 5, out);
    benchmark::DoNotOptimize(out.chosen);
  }
}
BENCHMARK(BM_Logprobs)->Unit(benchmark::kMicrosecond);

void BM_SampleFrom(benchmark::State& state) {
  std::vector<float> probs(kVocab, 1.0f / kVocab);
  Rng rng(3);
  for (auto _ : state) benchmark::DoNotOptimize(SampleFrom(probs, rng));
}
BENCHMARK(BM_SampleFrom)->Unit(benchmark::kMicrosecond);

void BM_SpeculativeAcceptReject(benchmark::State& state) {
  std::vector<float> p(kVocab, 0.0f), q(kVocab, 0.0f), residual(kVocab);
  p[0] = 0.5f, p[1] = 0.5f, q[1] = 0.2f, q[2] = 0.8f;
  Rng rng(3);
  for (auto _ : state) benchmark::DoNotOptimize(SpeculativeAccept(p, q, 2, rng, residual));
}
BENCHMARK(BM_SpeculativeAcceptReject)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tandem

BENCHMARK_MAIN();
