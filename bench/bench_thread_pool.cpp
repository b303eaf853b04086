// What handing a job to the pool costs after the calling thread worked alone for a while (the
// gap between one forward's products and the next: sampling, the drafter's steps). A worker
// that has gone to sleep must be woken (a futex wake and a reschedule); one still waiting for
// work starts within a microsecond. Each iteration busy-waits `gap` microseconds on the calling
// thread, then times one two-task ParallelForRange; the figure is the mean hand-off time.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>

#include "base/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

void BM_HandOffAfterGap(benchmark::State& state) {
  tandem::ThreadPool pool(2);
  const auto gap = std::chrono::microseconds(state.range(0));
  std::atomic<size_t> sink{0};
  for (auto _ : state) {
    state.PauseTiming();
    const auto g0 = Clock::now();
    while (Clock::now() - g0 < gap) {
    }
    state.ResumeTiming();
    pool.ParallelForRange(2, [&](size_t begin, size_t end, int thread) {
      sink.fetch_add(end - begin + static_cast<size_t>(thread), std::memory_order_relaxed);
    });
  }
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_HandOffAfterGap)
    ->ArgName("gap_us")
    ->Arg(0)
    ->Arg(20)
    ->Arg(100)
    ->Arg(500)
    ->Arg(3000)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
