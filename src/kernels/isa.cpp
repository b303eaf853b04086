#include "kernels/isa.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "base/cpu_features.h"
#include "base/error.h"
#include "kernels/attention_isa.h"
#include "kernels/matmul_kernel.h"
#include "kernels/ops_isa.h"
#include "kernels/panels_isa.h"
#include "kernels/probes_isa.h"

namespace tandem::kernels {
namespace {

bool Supported(Isa isa) {
  const CpuFeatures& f = HostCpuFeatures();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return f.HasAvx2Tier();
    case Isa::kAvx512:
      return f.HasAvx512Tier();
  }
  return false;
}

std::atomic<int>& ActiveSlot() {
  static std::atomic<int> slot{static_cast<int>(DefaultIsa())};
  return slot;
}

// The quantized matmul kernels of the AVX-512 path need VNNI; without it they are AVX2's. With
// GFNI active, its table whose nibble types unpack with it.
const MatMulKernelTable& Avx512QuantMatMulKernels() {
  if (!HostCpuFeatures().avx512vnni) return avx2::MatMulKernels();
  return GfniActive() ? avx512::MatMulKernelsGfni() : avx512::MatMulKernels();
}

// Indexed by Isa. Constant-initialized: nothing here runs before main.
#define TANDEM_KERNEL_TABLE(isa, ns, quant)                                                       \
  KernelTable {                                                                                   \
    isa, ns::RmsNorm, ns::Gelu, ns::GeGlu, ns::Silu, ns::SigmoidGlu, ns::Softcap, ns::Softmax,    \
        ns::ToHalf, ns::AttendHeads, ns::AttendDenseRows, ns::MatMulPanelRows, ns::MatMulKernels, \
        quant, ns::ReadSum, ns::Int8MultiplyAdds                                                  \
  }
constexpr KernelTable kTables[] = {
    TANDEM_KERNEL_TABLE(Isa::kScalar, ref, ref::MatMulKernels),
    TANDEM_KERNEL_TABLE(Isa::kAvx2, avx2, avx2::MatMulKernels),
    TANDEM_KERNEL_TABLE(Isa::kAvx512, avx512, Avx512QuantMatMulKernels),
};
#undef TANDEM_KERNEL_TABLE
static_assert(kTables[static_cast<int>(Isa::kAvx2)].isa == Isa::kAvx2 &&
              kTables[static_cast<int>(Isa::kAvx512)].isa == Isa::kAvx512);

}  // namespace

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

std::optional<Isa> ParseIsaName(std::string_view name) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (IsaName(isa) == name) return isa;
  }
  return std::nullopt;
}

std::vector<Isa> SupportedIsas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (Supported(isa)) out.push_back(isa);
  }
  return out;
}

Isa DefaultIsa() {
  if (const char* env = std::getenv("TANDEM_ISA")) {
    auto isa = ParseIsaName(env);
    if (isa && Supported(*isa)) return *isa;
  }
  return SupportedIsas().back();
}

Isa ActiveIsa() {
  return static_cast<Isa>(ActiveSlot().load(std::memory_order_relaxed));
}

const KernelTable& KernelsFor(Isa isa) {
  return kTables[static_cast<int>(isa)];
}

const KernelTable& ActiveKernels() {
  return KernelsFor(ActiveIsa());
}

namespace {
// Allowed unless TANDEM_GFNI=off (same-run comparisons in benchmarks).
std::atomic<bool>& GfniAllowed() {
  static std::atomic<bool> allowed{[] {
    const char* env = std::getenv("TANDEM_GFNI");
    return env == nullptr || std::string_view(env) != "off";
  }()};
  return allowed;
}
}  // namespace

bool GfniActive() {
  return HostCpuFeatures().gfni && HostCpuFeatures().HasAvx512Tier() &&
         GfniAllowed().load(std::memory_order_relaxed);
}

void SetGfniAllowed(bool allowed) {
  GfniAllowed().store(allowed);
}

std::string ActivePathName() {
  std::string name(IsaName(ActiveIsa()));
  if (&ActiveKernels().matmul_quant() == &avx512::MatMulKernelsGfni()) name += "+gfni";
  return name;
}

void SetActiveIsa(Isa isa) {
  if (!Supported(isa)) {
    Fail(ErrorKind::kUnsupported,
         "this CPU cannot run the " + std::string(IsaName(isa)) + " kernels");
  }
  ActiveSlot().store(static_cast<int>(isa));
}

}  // namespace tandem::kernels
