#include "encoders/clipped_linear.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/thread_pool.h"
#include "gguf/gguf_reader.h"
#include "kernels/tensor_binder.h"

namespace tandem {

void BindClampBounds(const TensorBinder& binder, const std::string& base, ClippedLinear& linear) {
  float* bounds[4] = {&linear.in_min, &linear.in_max, &linear.out_min, &linear.out_max};
  for (int i = 0; i < 4; ++i) {
    const std::string name = base + kClampSuffixes[i];
    const TensorInfo* t = binder.Find(name, {1}, /*required=*/false);
    if (t == nullptr) continue;
    const std::string where = binder.file().path() + ": tensor '" + name + "'";
    if (t->type != TensorType::kF32) {
      Fail(ErrorKind::kInvalidArgument, where + " has type " +
                                            std::string(TensorTypeName(t->type)) +
                                            ", expected f32 (a clamp bound is one f32 value)");
    }
    float v;
    std::memcpy(&v, binder.file().TensorData(*t), sizeof(v));
    if (std::isnan(v)) Fail(ErrorKind::kInvalidArgument, where + " is NaN");
    *bounds[i] = v;
  }
  if (linear.in_min > linear.in_max || linear.out_min > linear.out_max) {
    Fail(ErrorKind::kInvalidArgument,
         binder.file().path() + ": the clamp bounds of '" + base + "' have a minimum above " +
             "the maximum (input [" + std::to_string(linear.in_min) + ", " +
             std::to_string(linear.in_max) + "], output [" + std::to_string(linear.out_min) + ", " +
             std::to_string(linear.out_max) + "])");
  }
}

void Clamp(const float* x, float lo, float hi, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v < lo ? lo : (v > hi ? hi : v);
  }
}

namespace {

// Clamp over the pool in chunks (an element's result is the same wherever it is computed): a
// layer's clamps touch millions of values, which the calling thread alone made the workers wait
// for.
void ClampOverPool(const float* x, float lo, float hi, int64_t n, float* y, ThreadPool& pool) {
  constexpr int64_t kChunk = 16384;
  if (n < 2 * kChunk || pool.size() == 1) return Clamp(x, lo, hi, n, y);
  pool.ParallelFor(static_cast<size_t>((n + kChunk - 1) / kChunk), [&](size_t c) {
    const int64_t begin = static_cast<int64_t>(c) * kChunk;
    Clamp(x + begin, lo, hi, std::min(kChunk, n - begin), y + begin);
  });
}

}  // namespace

bool ShareInputBounds(std::span<const ClippedProduct> products) {
  for (const ClippedProduct& p : products) {
    if (p.linear->in_min != products[0].linear->in_min ||
        p.linear->in_max != products[0].linear->in_max) {
      return false;
    }
  }
  return true;
}

void ClippedMatMulEach(std::span<const ClippedProduct> products, const float* x, int64_t T,
                       std::vector<float>& scratch, ThreadPool& pool, ClippedInput bounds) {
  if (products.empty()) return;
  if (bounds == ClippedInput::kClamped && !ShareInputBounds(products)) {
    Fail(ErrorKind::kInternal,
         "ClippedMatMulEach: an input clamped once for products whose input bounds differ");
  }
  const int64_t cols = products[0].linear->w.cols;
  std::vector<bool> done(products.size(), false);
  for (size_t i = 0; i < products.size(); ++i) {
    if (done[i]) continue;
    const ClippedLinear& first = *products[i].linear;
    kernels::MatMulProduct group[8];
    const ClippedLinear* linears[8] = {};
    size_t n = 0;
    for (size_t j = i; j < products.size(); ++j) {
      const ClippedLinear& l = *products[j].linear;
      if (done[j] || l.in_min != first.in_min || l.in_max != first.in_max) continue;
      if (n == 8) Fail(ErrorKind::kInternal, "ClippedMatMulEach: more than 8 products");
      linears[n] = &l;
      group[n++] = {&l.w, products[j].y};
      done[j] = true;
    }
    const float* input = x;
    if (first.ClipsInput() && bounds == ClippedInput::kClamp) {
      scratch.resize(static_cast<size_t>(T * cols));
      ClampOverPool(x, first.in_min, first.in_max, T * cols, scratch.data(), pool);
      input = scratch.data();
    }
    size_t m = 0;
    for (size_t j = 0; j < n; ++j) {
      const ClippedLinear& l = *linears[j];
      if (l.panels != nullptr) {
        kernels::MatMulPanels(*l.panels, input, T, group[j].y, pool, l.out_min, l.out_max);
      } else {
        group[m++] = group[j];
      }
    }
    if (m > 0) kernels::MatMulEach({group, m}, input, T, pool);
  }
  for (const ClippedProduct& p : products) {
    if (p.linear->ClipsOutput() && p.linear->panels == nullptr) {  // panels clamp as they store
      ClampOverPool(p.y, p.linear->out_min, p.linear->out_max, T * p.linear->w.rows, p.y, pool);
    }
  }
}

}  // namespace tandem
