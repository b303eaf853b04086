// GeGluQuick against x·sigmoid(1.702x)·up in double, the same bits on every ISA path and whether
// or not it is spread over a pool.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"
#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;

TEST(GeGluQuickTest, MatchesTheFormulaAndIsTheSameEverywhere) {
  const int64_t n = 40000;  // long enough to be spread over the pool
  std::vector<float> gate(n), up(n);
  for (int64_t i = 0; i < n; ++i) {
    gate[i] = -30.0f + 60.0f * static_cast<float>(i) / n;
    up[i] = 0.5f + std::sin(0.01f * static_cast<float>(i));
  }
  std::vector<float> first(n);
  GeGluQuick(gate.data(), up.data(), n, first.data());
  for (int64_t i = 0; i < n; ++i) {
    const double x = gate[i];
    const double want = x / (1.0 + std::exp(-1.702 * x)) * up[i];
    ASSERT_NEAR(first[i], want, 1e-6 * std::max(1.0, std::abs(want))) << "x = " << x;
  }
  ThreadPool pool(2);
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    std::vector<float> serial(n), spread(n);
    GeGluQuick(gate.data(), up.data(), n, serial.data());
    GeGluQuick(gate.data(), up.data(), n, spread.data(), pool);
    EXPECT_TRUE(BitwiseEqual(first, serial)) << IsaName(isa);
    EXPECT_TRUE(BitwiseEqual(first, spread)) << IsaName(isa);
  }
  // It is not the tanh GELU: at x = 1 they differ in the third digit.
  const float one = 1.0f, unit = 1.0f;
  float quick, tanh_gelu;
  GeGluQuick(&one, &unit, 1, &quick);
  GeGlu(&one, &unit, 1, &tanh_gelu);
  EXPECT_GT(std::abs(quick - tanh_gelu), 1e-3f);
}

}  // namespace
}  // namespace tandem::kernels
