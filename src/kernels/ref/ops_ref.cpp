// Scalar row ops: the fallback path and the oracle the SIMD paths are tested against.
#include <cmath>
#include <cstdint>

#include "kernels/ops_isa.h"
#include "tensor/float16.h"

namespace tandem::kernels::ref {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// 0.5·x·(1 + tanh u) written as x·sigmoid(2u) = x / (1 + e^(-2u)): the same function without the
// cancellation of 1 + tanh u for negative x.
inline float GeluOne(float x) {
  const float u = kSqrt2OverPi * (x + kGeluCubic * x * x * x);
  return x / (1.0f + std::exp(-2.0f * u));
}

}  // namespace

void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y) {
  double sum = 0.0;  // sequential, in index order
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]) * x[i];
  const float mean = n > 0 ? static_cast<float>(sum / static_cast<double>(n)) : 0.0f;
  const float scale = 1.0f / std::sqrt(mean + eps);
  if (weight != nullptr) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * weight[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale;
  }
}

void Gelu(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = GeluOne(x[i]);
}

void GeGlu(const float* gate, const float* up, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = GeluOne(gate[i]) * up[i];
}

void Silu(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void SigmoidGlu(const float* value, const float* gate, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = value[i] / (1.0f + std::exp(-gate[i]));
}

void ToHalf(const float* x, int64_t n, uint16_t* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = Fp32ToFp16(x[i]);
}

void Softcap(const float* x, float cap, int64_t n, float* y) {
  const float inv_cap = 1.0f / cap;
  for (int64_t i = 0; i < n; ++i) y[i] = cap * std::tanh(x[i] * inv_cap);
}

void Softmax(const float* x, int64_t n, float* y) {
  float max = -INFINITY;
  for (int64_t i = 0; i < n; ++i) max = std::fmax(max, x[i]);
  double sum = 0.0;  // sequential, in index order
  for (int64_t i = 0; i < n; ++i) {
    y[i] = std::exp(x[i] - max);
    sum += y[i];
  }
  const float inv_sum = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) y[i] *= inv_sum;
}

void Exp(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]);
}

}  // namespace tandem::kernels::ref
