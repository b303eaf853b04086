// Gemma 4's clippable linear layers (vision q/k/v/o/gate/up/down; the audio conformer's too):
//   y = clamp(W · clamp(x, in_min, in_max), out_min, out_max), no bias.
// The four bounds are one-element F32 tensors beside the weight (`<base>.input_min`, ...), each
// optional: a missing bound is no bound (docs/vision.md § Clippable linears).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/matmul_panels.h"

namespace tandem {

class TensorBinder;
class ThreadPool;

struct ClippedLinear {
  static constexpr float kNone = std::numeric_limits<float>::infinity();

  kernels::WeightMatrix w;  // [out][in]
  // The same weights as panels (kernels/matmul_panels.h), read instead of `w` when present.
  std::shared_ptr<const kernels::PanelMatrix> panels = nullptr;
  float in_min = -kNone, in_max = kNone;
  float out_min = -kNone, out_max = kNone;

  bool ClipsInput() const { return in_min != -kNone || in_max != kNone; }
  bool ClipsOutput() const { return out_min != -kNone || out_max != kNone; }
};

// The bound suffixes, in the order input_min, input_max, output_min, output_max.
inline constexpr const char* kClampSuffixes[4] = {".input_min", ".input_max", ".output_min",
                                                  ".output_max"};

// Reads the bounds of the linear whose weight is `base` + ".weight" into `linear`. Each present
// bound must be F32 with exactly one element, not NaN, and a minimum must not exceed its
// maximum; Error(kInvalidArgument) naming the file and tensor otherwise.
void BindClampBounds(const TensorBinder& binder, const std::string& base, ClippedLinear& linear);

// y[i] = min(max(x[i], lo), hi) (NaN passes through). x, y: [n]; in place allowed.
void Clamp(const float* x, float lo, float hi, int64_t n, float* y);

// x[i] clamped in place to `linear`'s input bounds (nothing without them): what a producer
// applies to the values it writes, while they are in cache, before ClippedInput::kClamped.
inline void ClampToInput(const ClippedLinear& linear, float* x, int64_t n) {
  if (linear.ClipsInput()) Clamp(x, linear.in_min, linear.in_max, n, x);
}

// One product of ClippedMatMulEach: y[T][linear->w.rows].
struct ClippedProduct {
  const ClippedLinear* linear = nullptr;
  float* y = nullptr;
};

// Whether the products' linears share one pair of input bounds (ClampToInput by any one of
// them clamps for all).
bool ShareInputBounds(std::span<const ClippedProduct> products);

// What ClippedMatMulEach does with the input bounds.
enum class ClippedInput {
  kClamp,    // clamps a copy of x (in `scratch`) for each set of bounds
  kClamped,  // x is within them already: the products share one set and x had ClampToInput
};

// Each product's clipped linear of the same input x[T][cols]: products with the same input
// bounds share one clamped copy of x (held in `scratch`) and one kernels::MatMulEach, so each
// result is bitwise kernels::MatMul of its clamped input, then clamped (kernels::MatMulPanels
// for a linear with panels). At most 8 products. ClippedInput::kClamped with products whose
// bounds differ is Error(kInternal).
void ClippedMatMulEach(std::span<const ClippedProduct> products, const float* x, int64_t T,
                       std::vector<float>& scratch, ThreadPool& pool,
                       ClippedInput bounds = ClippedInput::kClamp);

// A single clipped product.
inline void ClippedMatMul(const ClippedLinear& linear, const float* x, int64_t T, float* y,
                          std::vector<float>& scratch, ThreadPool& pool,
                          ClippedInput bounds = ClippedInput::kClamp) {
  const ClippedProduct p{&linear, y};
  ClippedMatMulEach({&p, 1}, x, T, scratch, pool, bounds);
}

}  // namespace tandem
