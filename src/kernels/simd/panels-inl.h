// MatMulPanelRows (panels_isa.h) over a vector trait V (vec_trait.h), for the ISA translation
// units only: an outer-product tile of NP panels by NT activation rows. For every column, the
// panels' values are loaded once and each activation value is broadcast once; output (t, r) adds
// x[t][i]·W[r][i] by fused multiply-add for i ascending from zero, the same whatever NT, NP or
// the thread that runs it. f16/bf16 panels are first widened to f32, a block at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/panels_isa.h"
#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::simd {

template <VecTrait V>
struct PanelF32 {
  static constexpr int kBytes = 4;
  static typename V::V Load(const uint8_t* p) { return V::Load(reinterpret_cast<const float*>(p)); }
};
template <VecTrait V>
struct PanelF16 {
  static constexpr int kBytes = 2;
  static typename V::V Load(const uint8_t* p) { return V::LoadF16(p); }
};
template <VecTrait V>
struct PanelBF16 {
  static constexpr int kBytes = 2;
  static typename V::V Load(const uint8_t* p) { return V::LoadBF16(p); }
};

// Activation rows per tile and panels per tile: NT·NP·(16 / kLanes) accumulators.
template <VecTrait V>
inline constexpr int kPanelTileRows = V::kRegisters >= 32 ? 12 : 6;
template <VecTrait V>
inline constexpr int kPanelTilePanels = V::kRegisters >= 32 ? 2 : 1;

// Panels [p0, p0 + NP) against activation rows x[t] (NT row pointers, which may repeat: only
// the first n_t rows' outputs are stored).
template <VecTrait V, class W, int NP, int NT>
inline void PanelTile(const PanelRows& a, int p0, const float* const* x, float* const* y, int n_t) {
  constexpr int kVec = kPanelRows / V::kLanes;  // vectors per panel
  constexpr int kU = NP * kVec;
  constexpr int64_t kStep = static_cast<int64_t>(kPanelRows) * W::kBytes;  // one column
  typename V::V acc[NT][kU];
  for (int t = 0; t < NT; ++t)
    for (int u = 0; u < kU; ++u) acc[t][u] = V::Zero();
  const uint8_t* base[NP];
  for (int p = 0; p < NP; ++p) base[p] = a.panels + (p0 + p) * a.cols * kStep;
  for (int64_t i = 0; i < a.cols; ++i) {
    typename V::V w[kU];
    for (int p = 0; p < NP; ++p) {
      for (int k = 0; k < kVec; ++k)
        w[p * kVec + k] = W::Load(base[p] + i * kStep + k * V::kLanes * W::kBytes);
    }
    for (int t = 0; t < NT; ++t) {
      const auto xv = V::Set1(x[t][i]);
      for (int u = 0; u < kU; ++u) acc[t][u] = V::MulAdd(xv, w[u], acc[t][u]);
    }
  }
  const bool clamps = a.lo != -std::numeric_limits<float>::infinity() ||
                      a.hi != std::numeric_limits<float>::infinity();
  const auto lo = V::Set1(a.lo), hi = V::Set1(a.hi);
  for (int t = 0; t < n_t; ++t) {
    for (int u = 0; u < kU; ++u) {
      const int r = p0 * kPanelRows + u * V::kLanes;
      const int n = std::clamp(a.n_rows - r, 0, V::kLanes);
      // Min/Max return their second operand when either is NaN: NaN passes, as in the scalar
      // clamp.
      const auto v = clamps ? V::Min(hi, V::Max(lo, acc[t][u])) : acc[t][u];
      if (n == V::kLanes) {
        V::Store(y[t] + r, v);
      } else if (n > 0) {
        V::MaskStore(V::FirstN(n), y[t] + r, v);
      }
    }
  }
}

// Activation rows [t0, t0 + n_t), n_t <= NT, against every panel.
template <VecTrait V, class W, int NT>
void PanelRowTile(const PanelRows& a, int64_t t0, int n_t) {
  constexpr int NP = kPanelTilePanels<V>;
  const float* x[NT];
  float* y[NT];
  for (int t = 0; t < NT; ++t) {
    const int64_t row = t0 + std::min(t, n_t - 1);
    x[t] = a.x + row * a.ldx;
    y[t] = a.y + row * a.ldy;
  }
  int p = 0;
  for (; p + NP <= a.n_panels; p += NP) PanelTile<V, W, NP, NT>(a, p, x, y, n_t);
  for (; p < a.n_panels; ++p) PanelTile<V, W, 1, NT>(a, p, x, y, n_t);
}

// Tiles of NT rows; a last tile of at most NT / 2 rows runs as a half-height tile rather than
// repeating rows whose products are discarded.
template <VecTrait V, class W>
void PanelRowsOf(const PanelRows& a) {
  constexpr int NT = kPanelTileRows<V>;
  for (int64_t t0 = 0; t0 < a.n_x; t0 += NT) {
    const int n_t = static_cast<int>(std::min<int64_t>(NT, a.n_x - t0));
    if (n_t <= NT / 2) {
      PanelRowTile<V, W, NT / 2>(a, t0, n_t);
    } else {
      PanelRowTile<V, W, NT>(a, t0, n_t);
    }
  }
}

// Panels of 16-bit values are widened to f32 a block at a time into the caller's scratch, which
// every tile of activation rows then reads from cache: each value is widened once per product,
// not once per tile. Widening is exact, so the outputs are those of the 16-bit tile.
template <VecTrait V, class W>
void WidenedPanelRowsOf(const PanelRows& a) {
  constexpr int NP = kPanelTilePanels<V>;
  static_assert(NP <= 2, "WidenedScratchValues sizes the scratch for tiles of one or two panels");
  const int64_t panel_values = a.cols * kPanelRows;
  const int block = static_cast<int>(WidenedBlockPanels(a.cols, NP));
  float* widened = a.scratch;  // 64-byte aligned: no column's vector load spans two lines
  for (int p0 = 0; p0 < a.n_panels; p0 += block) {
    const int n = std::min(block, a.n_panels - p0);
    const int64_t values = n * panel_values;
    const uint8_t* src = a.panels + p0 * panel_values * W::kBytes;
    for (int64_t j = 0; j < values; j += V::kLanes) {
      V::Store(widened + j, W::Load(src + j * W::kBytes));
    }
    PanelRows b = a;
    b.type = TensorType::kF32;
    b.panels = reinterpret_cast<const uint8_t*>(widened);
    b.n_panels = n;
    b.n_rows = a.n_rows - p0 * kPanelRows;
    b.y = a.y + p0 * kPanelRows;
    PanelRowsOf<V, PanelF32<V>>(b);
  }
}

template <VecTrait V>
void MatMulPanelRows(const PanelRows& a) {
  switch (a.type) {
    case TensorType::kF16:
      return WidenedPanelRowsOf<V, PanelF16<V>>(a);
    case TensorType::kBF16:
      return WidenedPanelRowsOf<V, PanelBF16<V>>(a);
    default:
      return PanelRowsOf<V, PanelF32<V>>(a);
  }
}

}  // namespace tandem::kernels::simd

// Inside an ISA namespace: defines that ISA's MatMulPanelRows (panels_isa.h).
#define TANDEM_SIMD_DEFINE_PANELS(V)            \
  void MatMulPanelRows(const PanelRows& rows) { \
    simd::MatMulPanelRows<V>(rows);             \
  }
