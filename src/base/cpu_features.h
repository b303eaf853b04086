// What the host CPU and OS can run, read once with cpuid/xgetbv. The kernel dispatcher uses it.
#pragma once

#include <string>

namespace tandem {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512bf16 = false;
  bool gfni = false;      // Galois-field byte instructions (an affine transform of each byte)
  bool avx_vnni = false;  // VEX-encoded VNNI (Alder Lake and later)
  bool amx_tile = false;  // listed by cpuid; usable only after the kernel grants the tile state
  bool amx_int8 = false;
  bool amx_bf16 = false;

  // Summary tiers the dispatcher picks from.
  bool HasAvx2Tier() const { return avx2 && fma && f16c; }
  bool HasAvx512Tier() const {
    return HasAvx2Tier() && avx512f && avx512bw && avx512vl && avx512dq;
  }
  std::string ToString() const;
};

// Host features, with OS support for the register state (XCR0) checked.
const CpuFeatures& HostCpuFeatures();

}  // namespace tandem
