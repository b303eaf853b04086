// Per-ISA entry points of the row ops (ref/ and, from simd/ops-inl.h, avx2/ and avx512/ each
// define all of them). Internal: callers use ops.h, which dispatches through the active ISA's
// KernelTable (isa.h); tests call these to compare paths.
#pragma once

#include <cstdint>

// Every namespace declares the same set; the contracts are those of the ops.h function of the
// same name. Elementwise results never depend on where an element sits in its row, and each
// reduction has one fixed order per ISA, so a row's result depends only on its values and n.
#define TANDEM_KERNELS_DECLARE_OPS()                                                 \
  void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y); \
  void Gelu(const float* x, int64_t n, float* y);                                    \
  void GeGlu(const float* gate, const float* up, int64_t n, float* y);               \
  void Silu(const float* x, int64_t n, float* y);                                    \
  void SigmoidGlu(const float* value, const float* gate, int64_t n, float* y);       \
  void Softcap(const float* x, float cap, int64_t n, float* y);                      \
  void Softmax(const float* x, int64_t n, float* y);                                 \
  void Exp(const float* x, int64_t n, float* y);                                     \
  void ToHalf(const float* x, int64_t n, uint16_t* y);

namespace tandem::kernels::ref {
TANDEM_KERNELS_DECLARE_OPS()
}  // namespace tandem::kernels::ref

namespace tandem::kernels::avx2 {
TANDEM_KERNELS_DECLARE_OPS()
}  // namespace tandem::kernels::avx2

namespace tandem::kernels::avx512 {
TANDEM_KERNELS_DECLARE_OPS()
}  // namespace tandem::kernels::avx512

#undef TANDEM_KERNELS_DECLARE_OPS
