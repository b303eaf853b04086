// Which instruction-set path the kernels run. One binary runs on any x86-64: the path is chosen at
// start-up from the host's features, and tests force each path the machine supports.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tandem::kernels {

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

}  // namespace tandem::kernels
