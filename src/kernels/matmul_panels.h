// Float weights (F32, F16, BF16) repacked into panels of kPanelRows rows, each panel's values
// stored column by column, for products with many activation rows (an encoder's patches or
// frames): an outer-product kernel that loads each weight once per tile of activation rows (F16
// and BF16 widened to f32 once per block of panels) and sums each output over the columns in
// order, one accumulator per output, no horizontal sum.
//
// Results differ from MatMul's in the last bits (another order of additions); like MatMul's, an
// output does not depend on the batch, the row's position or the thread count. A caller uses one
// or the other for a given matrix, never both.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "base/huge_page_allocator.h"
#include "kernels/matmul.h"
#include "kernels/panels_isa.h"

namespace tandem {
class ThreadPool;
}  // namespace tandem

namespace tandem::kernels {

struct PanelMatrix {
  TensorType type = TensorType::kF32;  // the values keep the source's type
  int64_t rows = 0, cols = 0;
  // ceil(rows / kPanelRows) panels, padding rows zero; 64-byte aligned, so that no column's
  // vector load spans two cache lines.
  std::vector<uint8_t, HugePageAllocator<uint8_t>> data;
  bool empty() const { return data.empty(); }
};

// True for the types PackPanels takes.
bool CanPackPanels(TensorType type);

// The panels of w (row-major F32/F16/BF16); Error(kUnsupported) for another type.
PanelMatrix PackPanels(const WeightMatrix& w);

// y[T][w.rows] = x[T][w.cols] · wᵀ, each output then clamped to [lo, hi] (NaN stays NaN). Work
// is split over groups of panels, and over spans of rows when the groups are fewer than twice
// the threads.
void MatMulPanels(const PanelMatrix& w, const float* x, int64_t T, float* y, ThreadPool& pool,
                  float lo = -std::numeric_limits<float>::infinity(),
                  float hi = std::numeric_limits<float>::infinity());

}  // namespace tandem::kernels
