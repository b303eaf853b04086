// Which instruction-set path the kernels run. One binary runs on any x86-64: the path is chosen at
// start-up from the host's features, and tests force each path the machine supports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::kernels {

struct KvView;
struct DenseRows;
struct PanelRows;
struct KeyRange;
struct AttendSplitState;
struct MatMulKernelTable;

enum class Isa {
  kScalar,  // ref/: plain C++, the fallback and the oracle
  kAvx2,    // avx2/: AVX2 + FMA + F16C
  kAvx512,  // avx512/: AVX-512 F/BW/VL/DQ, VNNI where present
};

std::string_view IsaName(Isa isa);
std::optional<Isa> ParseIsaName(std::string_view name);

// Every path this machine can run, scalar first.
std::vector<Isa> SupportedIsas();

// The best supported path, or the one named by the TANDEM_ISA environment variable
// (scalar | avx2 | avx512) if set and supported.
Isa DefaultIsa();

// The path kernels dispatch to now. Starts as DefaultIsa().
Isa ActiveIsa();
// Switches the path (tests and benchmarks). Throws Error(kUnsupported) if the host cannot run it.
void SetActiveIsa(Isa isa);

// Within the AVX-512 path, GFNI's byte affine transform takes a 4-bit weight's high nibble out in
// one instruction instead of a shift and a mask (the packed Q4_0 and Q4_K tiles), where the host
// has GFNI and it is allowed (the default; TANDEM_GFNI=off in the environment disallows it at
// start-up). The bits are the same either way; tests turn it off to run what CPUs with AVX-512
// VNNI but no GFNI (Cascade Lake) run.
bool GfniActive();
void SetGfniAllowed(bool allowed);
// The active path as figures name it: IsaName(ActiveIsa()), "+gfni" where its quantized table is
// avx512::MatMulKernelsGfni().
std::string ActivePathName();

// One ISA's kernels, the only place a path's entry points are chosen. Each ISA folder defines
// them (ops_isa.h, attention_isa.h, matmul_kernel.h); the dispatchers (ops.cpp, attention.cpp,
// matmul.cpp) call through the active table.
struct KernelTable {
  Isa isa;
  // Row ops (ops.h).
  void (*rms_norm)(const float* x, const float* weight, float eps, int64_t n, float* y);
  void (*gelu)(const float* x, int64_t n, float* y);
  void (*geglu)(const float* gate, const float* up, int64_t n, float* y);
  void (*silu)(const float* x, int64_t n, float* y);
  void (*sigmoid_glu)(const float* value, const float* gate, int64_t n, float* y);
  void (*softcap)(const float* x, float cap, int64_t n, float* y);
  void (*softmax)(const float* x, int64_t n, float* y);
  void (*to_half)(const float* x, int64_t n, uint16_t* y);
  // Attention's inner loop (attention_isa.h).
  void (*attend_heads)(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys,
                       float scale, float* out, const AttendSplitState* split);
  void (*attend_dense_rows)(const DenseRows& rows);
  // MatMulPanels' kernel (panels_isa.h).
  void (*panel_rows)(const PanelRows& rows);
  // MatMul's micro-kernels for float and for quantized weights (on AVX-512 without VNNI the
  // quantized ones are AVX2's; with GfniActive(), avx512::MatMulKernelsGfni()).
  const MatMulKernelTable& (*matmul_float)();
  const MatMulKernelTable& (*matmul_quant)();
  // The machine probes (probes_isa.h).
  uint64_t (*read_sum)(const void* p, size_t bytes);
  int64_t (*int8_multiply_adds)(int64_t rounds, int32_t* sum);
};

// The table of `isa` (whether or not this host can run it: tests compare the paths' code).
const KernelTable& KernelsFor(Isa isa);
// The table of ActiveIsa().
const KernelTable& ActiveKernels();

}  // namespace tandem::kernels
