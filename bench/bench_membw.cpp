// Memory read bandwidth with 1..N threads: the physical limit every matvec is measured against.
#include <benchmark/benchmark.h>

#include "base/read_bandwidth.h"
#include "base/thread_pool.h"

namespace tandem::bench {
namespace {

// Streams a 1 GiB buffer (far beyond any last-level cache) once per iteration.
void BM_ReadBandwidth(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  static ReadBuffer buffer(size_t{1} << 30);
  buffer.ReadAll(pool);
  for (auto _ : state) benchmark::DoNotOptimize(buffer.ReadAll(pool));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(buffer.bytes()));
  state.counters["GBps"] = benchmark::Counter(static_cast<double>(buffer.bytes()),
                                              benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}
BENCHMARK(BM_ReadBandwidth)
    ->DenseRange(1, PhysicalCoreCount())
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tandem::bench

BENCHMARK_MAIN();
