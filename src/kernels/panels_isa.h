// Per-ISA kernel of MatMulPanels (matmul_panels.h): ref/ and, from simd/panels-inl.h, avx2/ and
// avx512/ each define it. Internal: callers use matmul_panels.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "tensor/type_traits.h"

namespace tandem::kernels {

// Values per panel: output rows whose weights sit side by side, column after column.
inline constexpr int kPanelRows = 16;

// F16/BF16 panels are widened to f32 about this many bytes at a time, into scratch every tile of
// activation rows then reads from cache.
inline constexpr int64_t kWidenedBlockBytes = 768 * 1024;
// Panels of `cols` columns widened at a time by a kernel whose tile holds `tile_panels` panels:
// whole tiles, at least one.
inline int64_t WidenedBlockPanels(int64_t cols, int tile_panels) {
  const int64_t fit =
      kWidenedBlockBytes / (cols * kPanelRows * static_cast<int64_t>(sizeof(float)));
  return std::max<int64_t>(tile_panels, fit / tile_panels * tile_panels);
}
// Floats of scratch that widening needs, for every kernel's tile (one or two panels).
inline int64_t WidenedScratchValues(int64_t cols) {
  return std::max(WidenedBlockPanels(cols, 1), WidenedBlockPanels(cols, 2)) * cols * kPanelRows;
}

// Panels [0, n_panels) of a packed matrix against every activation row:
// y[t·ldy + p·kPanelRows + l] = Σ_i x[t·ldx + i] · W[p·kPanelRows + l][i] for rows < n_rows,
// the sum in column order from zero (one accumulator per output, no horizontal sum).
struct PanelRows {
  TensorType type = TensorType::kF32;  // of the panel values: F32, F16 or BF16
  const uint8_t* panels = nullptr;     // panel p, column i at panels + (p·cols + i)·16 values
  int n_panels = 0;
  int n_rows = 0;  // valid output rows counted from panel 0's first
  int64_t cols = 0;
  const float* x = nullptr;
  int64_t ldx = 0;
  int64_t n_x = 0;
  float* y = nullptr;
  int64_t ldy = 0;
  // Each output is clamped to [lo, hi] as it is stored: v < lo ? lo : (v > hi ? hi : v), so NaN
  // stays NaN.
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  // F16/BF16 panels: WidenedScratchValues(cols) floats, 64-byte aligned, owned by the calling
  // thread (kept out of the ISA translation units, which must not instantiate library templates
  // a baseline unit also uses).
  float* scratch = nullptr;
};

}  // namespace tandem::kernels

#define TANDEM_KERNELS_DECLARE_PANELS() void MatMulPanelRows(const PanelRows& rows);

namespace tandem::kernels::ref {
TANDEM_KERNELS_DECLARE_PANELS()
}  // namespace tandem::kernels::ref

namespace tandem::kernels::avx2 {
TANDEM_KERNELS_DECLARE_PANELS()
}  // namespace tandem::kernels::avx2

namespace tandem::kernels::avx512 {
TANDEM_KERNELS_DECLARE_PANELS()
}  // namespace tandem::kernels::avx512

#undef TANDEM_KERNELS_DECLARE_PANELS
