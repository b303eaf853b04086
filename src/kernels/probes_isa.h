// Per-ISA entry points of the machine probes (machine_limits.h): a streaming read with the
// path's widest loads, and a run of the path's int8 multiply-add instruction on values held in
// registers. Internal: callers use machine_limits.h, which dispatches through the active ISA's
// KernelTable (isa.h); tests call these to compare paths.
#pragma once

#include <cstddef>
#include <cstdint>

// Every namespace declares the same pair.
// ReadSum: the wrapping sum of the `bytes` / 8 64-bit words at p (p 64-byte aligned, bytes a
// multiple of 256), read front to back.
// Int8MultiplyAdds: `rounds` rounds of the path's int8 dot instruction over independent
// accumulators, every product 3 * -5; returns the multiply-adds done and stores the wrapping sum
// of every accumulator in *sum, which is therefore -15 times the count (mod 2^32): the work
// cannot be skipped and is checkable.
#define TANDEM_KERNELS_DECLARE_PROBES()          \
  uint64_t ReadSum(const void* p, size_t bytes); \
  int64_t Int8MultiplyAdds(int64_t rounds, int32_t* sum);

namespace tandem::kernels::ref {
TANDEM_KERNELS_DECLARE_PROBES()
}  // namespace tandem::kernels::ref

namespace tandem::kernels::avx2 {
TANDEM_KERNELS_DECLARE_PROBES()
}  // namespace tandem::kernels::avx2

namespace tandem::kernels::avx512 {
TANDEM_KERNELS_DECLARE_PROBES()
}  // namespace tandem::kernels::avx512

#undef TANDEM_KERNELS_DECLARE_PROBES
