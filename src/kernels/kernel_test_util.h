// Helpers shared by the kernels' tests.
#pragma once

#include <cstring>
#include <vector>

#include "kernels/isa.h"

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

// Σ(got - want)² / Σ want², in double.
inline double Nmse(const std::vector<float>& got, const std::vector<double>& want) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    ref += want[i] * want[i];
  }
  return ref > 0 ? err / ref : err;
}

inline bool BitwiseEqual(const float* a, const float* b, size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

inline bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && BitwiseEqual(a.data(), b.data(), a.size());
}

}  // namespace tandem::kernels::testing_kernels
