// Helpers shared by the kernels' tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/isa.h"
#include "tensor/quantize.h"

namespace tandem::kernels::testing_kernels {

// Restores the active ISA when the scope ends; with an argument, also forces that ISA until then.
class IsaScope {
 public:
  IsaScope() : saved_(ActiveIsa()) {}
  explicit IsaScope(Isa isa) : IsaScope() { SetActiveIsa(isa); }
  ~IsaScope() { SetActiveIsa(saved_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  Isa saved_;
};

// n standard normal values from mt19937(seed).
inline std::vector<float> RandomActivations(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng);
  return x;
}

// Σ(got - want)² / Σ want², in double.
inline double Nmse(const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    ref += want[i] * want[i];
  }
  return ref > 0 ? err / ref : err;
}

// A [rows][cols] matrix of `type`, row r quantized from sin(phase + 0.37 r + 0.11 c): smooth
// values that every quantized type represents with all its codes in use.
inline std::vector<uint8_t> SmoothWeights(TensorType type, int64_t rows, int64_t cols,
                                          float phase = 0.0f) {
  const size_t row_bytes = QuantizedRowBytes(type, cols);
  std::vector<uint8_t> data(rows * row_bytes);
  std::vector<float> row(cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      row[c] = std::sin(phase + 0.37f * static_cast<float>(r) + 0.11f * static_cast<float>(c));
    }
    QuantizeRow(type, row.data(), data.data() + r * row_bytes, cols);
  }
  return data;
}

inline bool BitwiseEqual(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

inline bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && BitwiseEqual(a.data(), b.data(), a.size());
}

}  // namespace tandem::kernels::testing_kernels
