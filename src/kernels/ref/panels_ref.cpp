// Scalar MatMulPanelRows: each output summed over the columns in order.
#include <algorithm>

#include "kernels/panels_isa.h"
#include "tensor/float16.h"

namespace tandem::kernels::ref {

void MatMulPanelRows(const PanelRows& a) {
  const int64_t esize = a.type == TensorType::kF32 ? 4 : 2;
  for (int64_t t = 0; t < a.n_x; ++t) {
    const float* x = a.x + t * a.ldx;
    for (int r = 0; r < std::min(a.n_rows, a.n_panels * kPanelRows); ++r) {
      const uint8_t* panel =
          a.panels + static_cast<int64_t>(r / kPanelRows) * a.cols * kPanelRows * esize;
      float sum = 0.0f;
      for (int64_t i = 0; i < a.cols; ++i) {
        const uint8_t* v = panel + (i * kPanelRows + r % kPanelRows) * esize;
        float w;
        if (a.type == TensorType::kF32) {
          std::copy_n(reinterpret_cast<const float*>(v), 1, &w);
        } else {
          uint16_t h;
          std::copy_n(reinterpret_cast<const uint16_t*>(v), 1, &h);
          w = a.type == TensorType::kF16 ? Fp16ToFp32(h) : Bf16ToFp32(h);
        }
        sum += x[i] * w;
      }
      a.y[t * a.ldy + r] = sum < a.lo ? a.lo : (sum > a.hi ? a.hi : sum);
    }
  }
}

}  // namespace tandem::kernels::ref
