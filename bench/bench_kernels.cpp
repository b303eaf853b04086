// Row ops and attention on Gemma 4 shapes, on the active ISA (TANDEM_ISA picks
// another): what the per-token non-matmul kernels cost, to compare ISA paths and revisions.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/isa.h"
#include "kernels/ops.h"

namespace tandem::bench {
namespace {

std::vector<float> Random(size_t n, float scale) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void BM_RmsNorm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto x = Random(n, 1.0f), w = Random(n, 1.0f);
  std::vector<float> y(n);
  for (auto _ : state) {
    kernels::RmsNorm(x.data(), w.data(), 1e-6f, n, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_GeGlu(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto gate = Random(n, 1.0f), up = Random(n, 1.0f);
  std::vector<float> y(n);
  for (auto _ : state) {
    kernels::GeGlu(gate.data(), up.data(), n, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Softcap(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto x = Random(n, 10.0f);
  std::vector<float> y(n);
  for (auto _ : state) {
    kernels::Softcap(x.data(), 30.0f, n, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Softmax(benchmark::State& state) {
  const int64_t n = state.range(0);
  const auto x = Random(n, 3.0f);
  std::vector<float> y(n);
  for (auto _ : state) {
    kernels::Softmax(x.data(), n, y.data());
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// One decode row: 8 query heads over one KV head of `keys` cached positions, on the calling
// thread or on `threads` threads (the E2B full-attention layers' shape at depth).
void BM_AttentionDecode(benchmark::State& state, TensorType type, int head_dim, int threads) {
  const int keys = static_cast<int>(state.range(0));
  const int n_heads = 8;
  const size_t row_bytes = kernels::KvRowBytes(type, head_dim);
  std::vector<uint8_t> k(row_bytes * keys), v(row_bytes * keys);
  const auto src = Random(static_cast<size_t>(head_dim) * keys * 2, 0.5f);
  for (int p = 0; p < keys; ++p) {
    kernels::StoreKvRow(type, src.data() + static_cast<size_t>(p) * head_dim, head_dim,
                        k.data() + p * row_bytes);
    kernels::StoreKvRow(type, src.data() + static_cast<size_t>(keys + p) * head_dim, head_dim,
                        v.data() + p * row_bytes);
  }
  const auto q = Random(static_cast<size_t>(n_heads) * head_dim, 0.1f);
  std::vector<float> out(q.size());
  const int32_t position = keys - 1;
  kernels::AttentionArgs a;
  a.n_rows = 1;
  a.n_heads = n_heads;
  a.q = q.data();
  a.q_row_stride = q.size();
  a.out = out.data();
  a.out_row_stride = out.size();
  a.positions = &position;
  a.kv = {type, k.data(), v.data(), 1, head_dim, keys, row_bytes, row_bytes, {0, keys}};
  std::unique_ptr<ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<ThreadPool>(threads);
  for (auto _ : state) {
    kernels::Attention(a, pool.get());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * keys);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * row_bytes) * keys);
}

void RegisterAll() {
  benchmark::RegisterBenchmark("rmsnorm", BM_RmsNorm)->Arg(1536)->Arg(2560);
  benchmark::RegisterBenchmark("geglu", BM_GeGlu)->Arg(6144)->Arg(10240);
  benchmark::RegisterBenchmark("softcap", BM_Softcap)->Arg(262144);
  benchmark::RegisterBenchmark("softmax", BM_Softmax)->Arg(262144);
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0,
                          TensorType::kQ4_0}) {
    for (int head_dim : {256, 512}) {
      const std::string name = "attention_decode/" + std::string(TensorTypeName(type)) + "/hd" +
                               std::to_string(head_dim);
      benchmark::RegisterBenchmark(name.c_str(), BM_AttentionDecode, type, head_dim, 1)
          ->ArgName("keys")
          ->Arg(256)
          ->Arg(1024);
    }
  }
  // At depth, on two threads: the KV bytes each call reads, per second.
  for (TensorType type : {TensorType::kF16, TensorType::kQ8_0, TensorType::kQ4_0}) {
    const std::string name = "attention_decode_2t/" + std::string(TensorTypeName(type)) + "/hd512";
    benchmark::RegisterBenchmark(name.c_str(), BM_AttentionDecode, type, 512, 2)
        ->ArgName("keys")
        ->Arg(4096)
        ->Arg(16384)
        ->Arg(32768)
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace tandem::bench

int main(int argc, char** argv) {
  using namespace tandem;
  benchmark::Initialize(&argc, argv);
  std::printf("isa %s, 1 thread\n", kernels::ActivePathName().c_str());
  benchmark::AddCustomContext("isa", kernels::ActivePathName());
  bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
