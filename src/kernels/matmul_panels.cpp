#include "kernels/matmul_panels.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.h"
#include "base/huge_page_allocator.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"

namespace tandem::kernels {

bool CanPackPanels(TensorType type) {
  return type == TensorType::kF32 || type == TensorType::kF16 || type == TensorType::kBF16;
}

PanelMatrix PackPanels(const WeightMatrix& w) {
  if (!CanPackPanels(w.type)) {
    Fail(ErrorKind::kUnsupported, std::string("panels hold f32, f16 or bf16 weights, not ") +
                                      std::string(TensorTypeName(w.type)));
  }
  ValidateWeightMatrix(w);
  const size_t esize = w.type == TensorType::kF32 ? 4 : 2;
  const int64_t n_panels = (w.rows + kPanelRows - 1) / kPanelRows;
  PanelMatrix p;
  p.type = w.type;
  p.rows = w.rows;
  p.cols = w.cols;
  p.data.assign(static_cast<size_t>(n_panels * kPanelRows * w.cols) * esize, 0);
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t r = 0; r < w.rows; ++r) {
    const uint8_t* row = src + r * w.row_bytes;
    uint8_t* panel = p.data.data() + (r / kPanelRows) * kPanelRows * w.cols * esize;
    for (int64_t i = 0; i < w.cols; ++i) {
      std::memcpy(panel + (i * kPanelRows + r % kPanelRows) * esize, row + i * esize, esize);
    }
  }
  return p;
}

void MatMulPanels(const PanelMatrix& w, const float* x, int64_t T, float* y, ThreadPool& pool,
                  float lo, float hi) {
  if (w.empty() || T <= 0) return;
  const auto kernel = ActiveKernels().panel_rows;
  const int n_panels = static_cast<int>((w.rows + kPanelRows - 1) / kPanelRows);
  const size_t esize = w.type == TensorType::kF32 ? 4 : 2;
  // Tasks of two panels (the widest tile), so every thread's tiles are whole. A matrix of fewer
  // such groups than twice the threads (a narrow convolution over many rows) splits the rows
  // too, in spans of about kMinRowsPerSpan or more: a row's outputs do not depend on its span.
  constexpr int kPanelsPerTask = 2;
  constexpr int64_t kMinRowsPerSpan = 64;
  const size_t n_groups = static_cast<size_t>((n_panels + kPanelsPerTask - 1) / kPanelsPerTask);
  const size_t wanted = 2 * pool.size();
  const int64_t n_spans =
      n_groups >= wanted
          ? 1
          : std::clamp<int64_t>(static_cast<int64_t>((wanted + n_groups - 1) / n_groups), 1,
                                std::max<int64_t>(1, T / kMinRowsPerSpan));
  const int64_t span_rows = (T + n_spans - 1) / n_spans;
  auto run_groups = [&](size_t begin, size_t end, int64_t t0, int64_t t1) {
    const int p0 = static_cast<int>(begin) * kPanelsPerTask;
    const int p1 = std::min(n_panels, static_cast<int>(end) * kPanelsPerTask);
    PanelRows rows;
    rows.type = w.type;
    rows.panels = w.data.data() + static_cast<size_t>(p0) * kPanelRows * w.cols * esize;
    rows.n_panels = p1 - p0;
    rows.n_rows = static_cast<int>(w.rows - static_cast<int64_t>(p0) * kPanelRows);
    rows.cols = w.cols;
    rows.x = x + t0 * w.cols;
    rows.ldx = w.cols;
    rows.n_x = t1 - t0;
    rows.y = y + t0 * w.rows + static_cast<int64_t>(p0) * kPanelRows;
    rows.ldy = w.rows;
    rows.lo = lo;
    rows.hi = hi;
    if (w.type != TensorType::kF32) {
      thread_local ActivationBuffer scratch;  // 64-byte aligned; kept for the thread's next call
      const auto need = static_cast<size_t>(WidenedScratchValues(w.cols));
      if (scratch.size() < need) scratch.resize(need);
      rows.scratch = scratch.data();
    }
    kernel(rows);
  };
  if (pool.size() == 1) return run_groups(0, n_groups, 0, T);
  if (n_spans == 1) {
    pool.ParallelForRange(n_groups,
                          [&](size_t begin, size_t end, int) { run_groups(begin, end, 0, T); });
    return;
  }
  pool.ParallelForRange(n_groups * n_spans, [&](size_t begin, size_t end, int) {
    for (size_t task = begin; task < end; ++task) {
      const size_t group = task / n_spans;
      const int64_t t0 = static_cast<int64_t>(task % n_spans) * span_rows;
      if (t0 >= T) continue;
      run_groups(group, group + 1, t0, std::min(T, t0 + span_rows));
    }
  });
}

}  // namespace tandem::kernels
