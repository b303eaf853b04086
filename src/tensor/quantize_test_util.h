// Helpers shared by the quantizer tests (quantize_test.cpp, quantize_rounding_test.cpp): test
// rows, and a row quantized and decoded through the public API.
#pragma once

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tensor/dequantize.h"
#include "tensor/quantize.h"

namespace tandem::quantize_testing {

// Mixed test data: uniform, Gaussian, and sparse outliers 20x larger.
inline std::vector<float> RandomRow(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::normal_distribution<float> gauss(0.0f, 0.5f);
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) {
    const int kind = static_cast<int>(rng() % 100);
    x[i] = kind < 50 ? uni(rng) : kind < 98 ? gauss(rng) : 20.0f * uni(rng);
  }
  return x;
}

inline std::vector<float> UniformRow(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = uni(rng);
  return x;
}

template <typename Block>
std::vector<Block> Quantize(TensorType type, const std::vector<float>& x) {
  std::vector<Block> blocks(x.size() / GetTensorTypeTraits(type).block_size);
  QuantizeRow(type, x.data(), blocks.data(), static_cast<int64_t>(x.size()));
  return blocks;
}

inline std::vector<float> Dequantize(TensorType type, const void* blocks, size_t n) {
  std::vector<float> y(n);
  if (type == TensorType::kQ8_1) {
    DequantizeRowQ8_1(static_cast<const BlockQ8_1*>(blocks), y.data(), static_cast<int64_t>(n));
  } else if (type == TensorType::kQ8_K) {
    DequantizeRowQ8_K(static_cast<const BlockQ8_K*>(blocks), y.data(), static_cast<int64_t>(n));
  } else {
    DequantizeRow(type, blocks, y.data(), static_cast<int64_t>(n));
  }
  return y;
}

inline float AbsMax(const float* x, int n) {
  float a = 0;
  for (int i = 0; i < n; ++i) a = std::max(a, std::fabs(x[i]));
  return a;
}

}  // namespace tandem::quantize_testing
