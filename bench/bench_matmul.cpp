// MatMul throughput per weight type on Gemma 4 shapes: matvec GB/s as a fraction of the machine's
// read bandwidth (measured here), batch scaling time(T=k)/time(T=1), and prefill GFLOP/s; the
// "packed/" variants read the load-time interleaved copy (kernels/matmul_repack.h) as tandem's
// model loader sets it up, the others the row-major file layout (`--no-repack`).
//
// Weights are laid out in enough copies to exceed the last-level cache several times and the
// copies are used in turn, so every call streams its weights from DRAM as decoding does.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/machine_limits.h"
#include "kernels/matmul.h"
#include "kernels/matmul_panels.h"
#include "kernels/matmul_repack.h"
#include "tensor/float16.h"
#include "tensor/quantize.h"

namespace tandem::bench {
namespace {

using kernels::WeightMatrix;

constexpr size_t kStreamBytes = size_t{256} << 20;  // weight bytes cycled through per benchmark

const TensorType kTypes[] = {
    TensorType::kF32,  TensorType::kF16,    TensorType::kBF16,   TensorType::kQ8_0,
    TensorType::kQ4_0, TensorType::kQ4_1,   TensorType::kQ5_0,   TensorType::kQ5_1,
    TensorType::kQ4_K, TensorType::kQ5_K,   TensorType::kQ6_K,   TensorType::kQ2_K,
    TensorType::kQ3_K, TensorType::kIQ4_NL, TensorType::kIQ4_XS, TensorType::kMXFP4};

struct Shape {
  int64_t rows, cols;  // out, in
  const char* name;
};
const Shape kMatvecShapes[] = {{1536, 6144, "1536x6144"},
                               {6144, 1536, "6144x1536"},
                               {2560, 10240, "2560x10240"},
                               {262144, 1536, "262144x1536_head"}};
const Shape kScalingShape = {2560, 10240, "2560x10240"};
const Shape kPrefillShape = {1536, 6144, "1536x6144"};
const Shape kPanelShapes[] = {
    {1536, 1536, "1536x1536"}, {6144, 1536, "6144x1536"}, {1536, 6144, "1536x6144"}};

double g_membw = 0;  // bytes/s, all threads

// Offsets of fp16 scale fields in blocks of the types without a quantizer in tensor/.
std::vector<size_t> Fp16Fields(TensorType t) {
  switch (t) {
    case TensorType::kIQ4_NL:
    case TensorType::kIQ4_XS:
      return {0};
    case TensorType::kQ2_K:
      return {80, 82};
    case TensorType::kQ3_K:
      return {108};
    default:
      return {};
  }
}

// 64 distinct random rows of `type`, repeated to fill rows x cols.
std::vector<uint8_t> MakeMatrix(TensorType type, int64_t rows, int64_t cols) {
  const auto& traits = GetTensorTypeTraits(type);
  const size_t row_bytes = RowBytes(traits, cols);
  const int64_t distinct = std::min<int64_t>(64, rows);
  std::vector<uint8_t> seed(distinct * row_bytes);
  std::mt19937 rng(42);
  if (CanQuantize(type)) {
    std::normal_distribution<float> normal(0.0f, 0.02f);
    std::vector<float> row(cols);
    for (int64_t r = 0; r < distinct; ++r) {
      for (auto& v : row) v = normal(rng);
      QuantizeRow(type, row.data(), seed.data() + r * row_bytes, cols);
    }
  } else {
    for (auto& b : seed) b = static_cast<uint8_t>(rng());
    for (size_t b = 0; b < seed.size() / traits.block_bytes; ++b) {
      uint8_t* block = seed.data() + b * traits.block_bytes;
      for (size_t off : Fp16Fields(type)) {
        const uint16_t h = Fp32ToFp16(0.001f + 0.001f * static_cast<float>(rng() % 16));
        std::memcpy(block + off, &h, sizeof h);
      }
      if (type == TensorType::kMXFP4) block[0] = static_cast<uint8_t>(118 + rng() % 8);
    }
  }
  std::vector<uint8_t> out(rows * row_bytes);
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(out.data() + r * row_bytes, seed.data() + (r % distinct) * row_bytes, row_bytes);
  }
  return out;
}

// The copies of one matrix a benchmark cycles through (kept until another is needed).
struct WeightSet {
  TensorType type;
  Shape shape;
  bool packed = false;
  std::vector<std::vector<uint8_t>> copies;
  std::vector<kernels::PackedMatrix> packs;  // one interleaved copy per copy when packed
  WeightMatrix Get(size_t i) const {
    WeightMatrix m =
        kernels::DenseWeightMatrix(type, copies[i % copies.size()].data(), shape.rows, shape.cols);
    if (packed) m = packs[i % packs.size()].Attach(m);
    return m;
  }
  size_t matrix_bytes() const { return copies[0].size(); }
};

const WeightSet& Weights(TensorType type, const Shape& shape, bool packed) {
  static std::unique_ptr<WeightSet> cached;
  if (!cached || cached->type != type || cached->shape.rows != shape.rows ||
      cached->shape.cols != shape.cols || cached->packed != packed) {
    cached.reset();
    auto set = std::make_unique<WeightSet>();
    set->type = type;
    set->shape = shape;
    set->packed = packed;
    set->copies.push_back(MakeMatrix(type, shape.rows, shape.cols));
    const size_t n = std::max<size_t>(1, kStreamBytes / set->copies[0].size());
    for (size_t i = 1; i < n; ++i) set->copies.push_back(set->copies[0]);
    for (size_t i = 0; packed && i < n; ++i) {
      set->packs.push_back(kernels::PackWeightMatrix(
          kernels::DenseWeightMatrix(type, set->copies[i].data(), shape.rows, shape.cols)));
    }
    cached = std::move(set);
  }
  return *cached;
}

std::vector<float> Activations(int64_t n) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng);
  return x;
}

// Seconds per call of MatMul with T activation rows, cycling through the weight copies.
double TimePerCall(const WeightSet& w, const std::vector<float>& x, int64_t T,
                   std::vector<float>& y, ThreadPool& pool, int calls) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) kernels::MatMul(w.Get(i), x.data(), T, y.data(), pool);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
}

void BM_Matvec(benchmark::State& state, TensorType type, Shape shape, bool packed) {
  ThreadPool& pool = GlobalThreadPool();
  const WeightSet& w = Weights(type, shape, packed);
  const auto x = Activations(shape.cols);
  std::vector<float> y(shape.rows);
  size_t i = 0;
  for (auto _ : state) {
    kernels::MatMul(w.Get(i++), x.data(), 1, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  const double bytes = static_cast<double>(w.matrix_bytes());
  state.counters["GBps"] =
      benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["of_membw"] =
      benchmark::Counter(bytes / g_membw, benchmark::Counter::kIsIterationInvariantRate);
}

// Seconds per one-row MatMul of w, after a warm-up pass: the baseline the ratios below divide by.
double MatvecSeconds(const WeightSet& w, const std::vector<float>& x, std::vector<float>& y,
                     ThreadPool& pool) {
  const int calls = static_cast<int>(std::max<size_t>(w.copies.size(), 8));
  TimePerCall(w, x, 1, y, pool, calls);  // warm up
  return TimePerCall(w, x, 1, y, pool, calls);
}

// Runs the benchmark loop, call(i) in iteration i; returns the seconds per iteration.
template <class Call>
double SecondsPerIteration(benchmark::State& state, Call call) {
  size_t i = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) call(i++);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
         static_cast<double>(state.iterations());
}

void BM_BatchScaling(benchmark::State& state, TensorType type, Shape shape, bool packed) {
  ThreadPool& pool = GlobalThreadPool();
  const int64_t T = state.range(0);
  const WeightSet& w = Weights(type, shape, packed);
  const auto x = Activations(T * shape.cols);
  std::vector<float> y(T * shape.rows);
  const double t1 = MatvecSeconds(w, x, y, pool);
  const double tk = SecondsPerIteration(state, [&](size_t i) {
    kernels::MatMul(w.Get(i), x.data(), T, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  });
  state.counters["vs_T1"] = tk / t1;
}

void BM_Prefill(benchmark::State& state, TensorType type, Shape shape, bool packed) {
  ThreadPool& pool = GlobalThreadPool();
  const int64_t T = 512;
  const WeightSet& w = Weights(type, shape, packed);
  const auto x = Activations(T * shape.cols);
  std::vector<float> y(T * shape.rows);
  size_t i = 0;
  for (auto _ : state) {
    kernels::MatMul(w.Get(i++), x.data(), T, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = 2.0 * T * static_cast<double>(shape.rows) * static_cast<double>(shape.cols);
  state.counters["GFLOPs"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// The encoders' float linears (kernels/matmul_panels.h) on the audio tower's shapes, T rows of
// activations (30 s of audio: 750): GFLOP/s, the weights resident as in an encode.
void BM_Panels(benchmark::State& state, TensorType type, Shape shape) {
  ThreadPool& pool = GlobalThreadPool();
  const int64_t T = state.range(0);
  const auto wf = Activations(shape.rows * shape.cols);
  std::vector<uint16_t> half(wf.size());
  for (size_t i = 0; i < wf.size(); ++i) {
    half[i] = type == TensorType::kF16 ? Fp32ToFp16(wf[i]) : Fp32ToBf16(wf[i]);
  }
  const void* data = type == TensorType::kF32 ? static_cast<const void*>(wf.data())
                                              : static_cast<const void*>(half.data());
  const kernels::PanelMatrix w =
      kernels::PackPanels(kernels::DenseWeightMatrix(type, data, shape.rows, shape.cols));
  const auto x = Activations(T * shape.cols);
  std::vector<float> y(T * shape.rows);
  for (auto _ : state) {
    kernels::MatMulPanels(w, x.data(), T, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  const double flops = 2.0 * T * static_cast<double>(shape.rows) * static_cast<double>(shape.cols);
  state.counters["GFLOPs"] =
      benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

// A constrained row's logits for `n` of the head's rows (MatMulRows on the row-major data, rows
// spread over the matrix) against the full product on the packed copy (what the row costs
// without the gather): vs_full = gather time / full time (SpeculativeRound::LimitedLogitTokens
// gathers up to an eighth of the vocabulary).
void BM_HeadGather(benchmark::State& state, TensorType type) {
  ThreadPool& pool = GlobalThreadPool();
  const Shape shape = kMatvecShapes[std::size(kMatvecShapes) - 1];
  const int64_t n = state.range(0);
  const WeightSet& w = Weights(type, shape, kernels::HasPackedLayout(type));
  const auto x = Activations(shape.cols);
  std::vector<float> y(shape.rows);
  std::vector<int32_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>(i * (shape.rows / n) + i % 7);
  const double full = MatvecSeconds(w, x, y, pool);
  const double gather = SecondsPerIteration(state, [&](size_t i) {
    kernels::MatMulRows(w.Get(i), ids.data(), n, x.data(), 1, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  });
  state.counters["vs_full"] = gather / full;
}

// Registers `fn` for every type (row-major) and again for the types with a packed layout.
template <class Fn>
void ForEachLayout(Fn fn) {
  for (bool packed : {false, true}) {
    for (TensorType type : kTypes) {
      if (packed && !kernels::HasPackedLayout(type)) continue;
      fn(type, packed, std::string(packed ? "packed/" : "") + std::string(TensorTypeName(type)));
    }
  }
}

void RegisterAll() {
  ForEachLayout([](TensorType type, bool packed, const std::string& name) {
    for (const Shape& shape : kMatvecShapes) {
      benchmark::RegisterBenchmark(("matvec/" + name + "/" + shape.name).c_str(), BM_Matvec, type,
                                   shape, packed)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  });
  ForEachLayout([](TensorType type, bool packed, const std::string& name) {
    benchmark::RegisterBenchmark(("batch/" + name + "/" + kScalingShape.name).c_str(),
                                 BM_BatchScaling, type, kScalingShape, packed)
        ->ArgName("T")
        ->Arg(2)
        ->Arg(4)
        ->Arg(8)
        ->Arg(16)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  });
  for (TensorType type : {TensorType::kQ4_0, TensorType::kQ6_K}) {
    benchmark::RegisterBenchmark(
        ("head_gather/" + std::string(TensorTypeName(type)) + "/262144x1536").c_str(),
        BM_HeadGather, type)
        ->ArgName("rows")
        ->Arg(256)
        ->Arg(4096)
        ->Arg(16384)
        ->Arg(32768)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kBF16}) {
    for (const Shape& shape : kPanelShapes) {
      benchmark::RegisterBenchmark(
          ("panels/" + std::string(TensorTypeName(type)) + "/" + shape.name).c_str(), BM_Panels,
          type, shape)
          ->ArgName("T")
          ->Arg(750)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  ForEachLayout([](TensorType type, bool packed, const std::string& name) {
    benchmark::RegisterBenchmark(("prefill512/" + name + "/" + kPrefillShape.name).c_str(),
                                 BM_Prefill, type, kPrefillShape, packed)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  });
}

}  // namespace
}  // namespace tandem::bench

// --threads=N (before Google Benchmark's own flags are read): the pool's size, default the
// physical cores. One thread compares kernels without waiting for a descheduled second vCPU.
int ThreadsFlag(int& argc, char** argv) {
  int threads = 0;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--threads=", 0) == 0) {
      threads = std::atoi(arg.c_str() + 10);
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return threads;
}

int main(int argc, char** argv) {
  using namespace tandem;
  const int threads = ThreadsFlag(argc, argv);
  benchmark::Initialize(&argc, argv);
  ThreadPool& pool = GlobalThreadPool(threads);
  bench::g_membw = kernels::MeasureReadBandwidth(pool);
  std::printf("isa %s, %d threads, read bandwidth %.1f GB/s\n", kernels::ActivePathName().c_str(),
              pool.size(), bench::g_membw / 1e9);
  benchmark::AddCustomContext("membw_GBps", std::to_string(bench::g_membw / 1e9));
  benchmark::AddCustomContext("isa", kernels::ActivePathName());
  bench::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
