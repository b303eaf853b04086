// Throughput of the instructions the quantized matmul tiles are made of, from registers (and one
// broadcast from L1), so that a kernel's rate can be set against what this core can issue: which
// instructions share the multiply pipes (on Zen 5 VPDPBUSD, VPMADDUBSW, VMULPS and VFMADD231PS
// all do, two per cycle) and which run beside them (integer adds, broadcasts). Each loop keeps
// at least 12 independent chains, more than latency times issue width, so the figure is
// throughput, not latency. A loop needs the ISA it names and is skipped without it.
//
// Counter ops: the loop's instructions per second.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "base/cpu_features.h"

namespace {

#define TANDEM_X14(I) I(0) I(1) I(2) I(3) I(4) I(5) I(6) I(7) I(8) I(9) I(10) I(11) I(12) I(13)
#define TANDEM_X16(I) TANDEM_X14(I) I(14) I(15)
// zmm: chains in 0..15 (16..19 for the scale steps), operands in 28..31 (EVEX only).
#define VPADDD_Z(n) "vpaddd %%zmm30, %%zmm" #n ", %%zmm" #n "\n"
#define VPDPBUSD_Z(n) "vpdpbusd %%zmm30, %%zmm31, %%zmm" #n "\n"
#define VFMADD_Z(n) "vfmadd231ps %%zmm28, %%zmm29, %%zmm" #n "\n"
#define VCVTDQ2PS_Z(n) "vcvtdq2ps %%zmm30, %%zmm" #n "\n"
// ymm (VEX, AVX2 machines have 16 registers): chains in 0..13, operands in 14 and 15.
#define VPMADDUBSW_Y(n) "vpmaddubsw %%ymm14, %%ymm15, %%ymm" #n "\n"
// The AVX2 tiles' inner step for one activation row: broadcast its next 4 codes, multiply them
// with the quant vector (ymm15) into 16-bit pair sums, add those into the row's partial (ymm p).
#define AVX2_TILE_STEP(n, p)                  \
  "vpbroadcastd (%%rsp), %%ymm" #n            \
  "\n"                                        \
  "vpmaddubsw %%ymm" #n ", %%ymm15, %%ymm" #n \
  "\n"                                        \
  "vpaddw %%ymm" #n ", %%ymm" #p ", %%ymm" #p "\n"

// Every register zeroed first (no denormals or NaNs in the float chains), then n iterations.
#define TANDEM_PIPE_LOOP_WITH(attributes, fn, prologue, body, ...)                             \
  attributes void fn(int64_t n) {                                                              \
    __asm__ volatile(prologue "1:\n" body "dec %0\n jnz 1b\n"                                  \
                     : "+r"(n)                                                                 \
                     :                                                                         \
                     : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", \
                       "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",    \
                       "xmm15" __VA_OPT__(, ) __VA_ARGS__);                                    \
  }
#define TANDEM_PIPE_LOOP(fn, body) TANDEM_PIPE_LOOP_WITH(, fn, "vzeroall\n", body)
#define ZERO_Z(n) "vpxord %%zmm" #n ", %%zmm" #n ", %%zmm" #n "\n"
#define TANDEM_PIPE_LOOP_EVEX(fn, body)                                                           \
  TANDEM_PIPE_LOOP_WITH(__attribute__((target("avx512f"))), fn,                                   \
                        TANDEM_X16(ZERO_Z) ZERO_Z(16) ZERO_Z(17) ZERO_Z(18) ZERO_Z(19) ZERO_Z(20) \
                            ZERO_Z(21) ZERO_Z(28) ZERO_Z(29) ZERO_Z(30) ZERO_Z(31),               \
                        body, "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm28",      \
                        "xmm29", "xmm30", "xmm31")

TANDEM_PIPE_LOOP_EVEX(VpadddZmm, TANDEM_X16(VPADDD_Z))
TANDEM_PIPE_LOOP_EVEX(VpdpbusdZmm, TANDEM_X16(VPDPBUSD_Z))
TANDEM_PIPE_LOOP_EVEX(VfmaddZmm, TANDEM_X16(VFMADD_Z))
// The AVX-512 Q4_0 tile's multiply-pipe work for two activation rows and one block: 8 VPDPBUSD,
// a VMULPS (the two scales) and a VFMADD231PS (into the row's sum) each.
TANDEM_PIPE_LOOP_EVEX(Q4_0TileMixZmm, TANDEM_X16(VPDPBUSD_Z) "vmulps %%zmm28, %%zmm29, %%zmm16\n"
                                                             "vmulps %%zmm28, %%zmm29, %%zmm17\n"
                                                             "vfmadd231ps %%zmm28, %%zmm29, %%zmm18\n"
                                                             "vfmadd231ps %%zmm28, %%zmm29, %%zmm19\n")
TANDEM_PIPE_LOOP_EVEX(VcvtdqZmm, TANDEM_X16(VCVTDQ2PS_Z))
// The same with the conversion of each row's block sum to float the tile also does.
TANDEM_PIPE_LOOP_EVEX(Q4_0TileMixCvtZmm,
                      TANDEM_X16(VPDPBUSD_Z) "vmulps %%zmm28, %%zmm29, %%zmm16\n"
                                             "vmulps %%zmm28, %%zmm29, %%zmm17\n"
                                             "vcvtdq2ps %%zmm30, %%zmm20\n"
                                             "vcvtdq2ps %%zmm30, %%zmm21\n"
                                             "vfmadd231ps %%zmm28, %%zmm29, %%zmm18\n"
                                             "vfmadd231ps %%zmm28, %%zmm29, %%zmm19\n")
TANDEM_PIPE_LOOP(VpmaddubswYmm, TANDEM_X14(VPMADDUBSW_Y))
TANDEM_PIPE_LOOP(Avx2TileStepYmm,
                 AVX2_TILE_STEP(0, 6) AVX2_TILE_STEP(1, 7) AVX2_TILE_STEP(2, 8) AVX2_TILE_STEP(3, 9)
                     AVX2_TILE_STEP(4, 10) AVX2_TILE_STEP(5, 11))

bool Avx512(const tandem::CpuFeatures& f) {
  return f.HasAvx512Tier();
}
bool Avx512Vnni(const tandem::CpuFeatures& f) {
  return f.HasAvx512Tier() && f.avx512vnni;
}
bool Avx2(const tandem::CpuFeatures& f) {
  return f.HasAvx2Tier();
}

struct Pipe {
  const char* name;
  bool (*supported)(const tandem::CpuFeatures&);
  void (*run)(int64_t iterations);
  int ops;  // instructions per iteration
};

const Pipe kPipes[] = {
    {"avx512/vpaddd", Avx512, VpadddZmm, 16},
    {"avx512/vpdpbusd", Avx512Vnni, VpdpbusdZmm, 16},
    {"avx512/vfmadd231ps", Avx512, VfmaddZmm, 16},
    {"avx512/q4_0_tile_16vpdpbusd_2vmulps_2vfmadd", Avx512Vnni, Q4_0TileMixZmm, 20},
    {"avx512/vcvtdq2ps", Avx512, VcvtdqZmm, 16},
    {"avx512/q4_0_tile_16vpdpbusd_2vmulps_2vcvtdq2ps_2vfmadd", Avx512Vnni, Q4_0TileMixCvtZmm, 22},
    {"avx2/vpmaddubsw", Avx2, VpmaddubswYmm, 14},
    {"avx2/tile_step_6vpbroadcastd_6vpmaddubsw_6vpaddw", Avx2, Avx2TileStepYmm, 18},
};

void BM_Pipe(benchmark::State& state, const Pipe* pipe) {
  if (!pipe->supported(tandem::HostCpuFeatures())) {
    state.SkipWithError("the CPU lacks this ISA");
    return;
  }
  constexpr int64_t kIterations = 1 << 16;
  for (auto _ : state) pipe->run(kIterations);
  const double ops = static_cast<double>(state.iterations()) * kIterations * pipe->ops;
  state.counters["ops"] = benchmark::Counter(ops, benchmark::Counter::kIsRate);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Pipe& pipe : kPipes) {
    benchmark::RegisterBenchmark(("pipes/" + std::string(pipe.name)).c_str(), BM_Pipe, &pipe)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
