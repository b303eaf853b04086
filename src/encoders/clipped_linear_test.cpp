// Clippable linears against a float64 computation of clamp(W·clamp(x)), with bounds that bite;
// an input its producer already clamped (ClippedInput::kClamped) gives bitwise the result of
// clamping inside (ClippedInput::kClamp), with and without panels.
#include "encoders/clipped_linear.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "base/thread_pool.h"
#include "encoders/encoders_test_util.h"
#include "kernels/kernel_test_util.h"

namespace tandem {
namespace {

using kernels::testing_kernels::RandomActivations;
using testing::ErrorOf;

constexpr int64_t kRows = 40, kCols = 24, kT = 9;

class ClippedLinearTest : public ::testing::TestWithParam<bool> {
 protected:
  ClippedLinearTest()
      : w_(RandomActivations(kRows * kCols, 1)), x_(RandomActivations(kT * kCols, 2)) {
    for (ClippedLinear* l : {&a_, &b_}) {
      l->w = kernels::DenseWeightMatrix(TensorType::kF32, w_.data(), kRows, kCols);
      if (GetParam())
        l->panels = std::make_shared<const kernels::PanelMatrix>(kernels::PackPanels(l->w));
      l->in_min = -0.5f;
      l->in_max = 0.75f;
    }
    a_.out_min = -1.0f;
    a_.out_max = 1.5f;
  }

  std::vector<float> w_, x_;
  ClippedLinear a_, b_;  // the same weights and input bounds; only a_ clamps its output
};

TEST_P(ClippedLinearTest, ClampsInputAndOutputAsTheDefinitionSays) {
  ThreadPool pool(2);
  std::vector<float> y(kT * kRows), scratch;
  ClippedMatMul(a_, x_.data(), kT, y.data(), scratch, pool);
  int clamped_in = 0, clamped_out = 0;
  for (int64_t t = 0; t < kT; ++t) {
    for (int64_t r = 0; r < kRows; ++r) {
      double s = 0;
      for (int64_t i = 0; i < kCols; ++i) {
        const double xi = std::clamp<double>(x_[t * kCols + i], -0.5, 0.75);
        clamped_in += xi != x_[t * kCols + i];
        s += w_[r * kCols + i] * xi;
      }
      clamped_out += s < -1.0 || s > 1.5;
      EXPECT_NEAR(y[t * kRows + r], std::clamp(s, -1.0, 1.5), 1e-5) << t << " " << r;
    }
  }
  EXPECT_GT(clamped_in, 0);  // the bounds bite
  EXPECT_GT(clamped_out, 0);
}

TEST_P(ClippedLinearTest, AnInputClampedByItsProducerGivesTheSameBits) {
  ThreadPool pool(2);
  std::vector<float> want_a(kT * kRows), want_b(kT * kRows), scratch;
  const ClippedProduct both[2] = {{&a_, want_a.data()}, {&b_, want_b.data()}};
  ClippedMatMulEach(both, x_.data(), kT, scratch, pool);

  std::vector<float> x = x_;
  ClampToInput(a_, x.data(), static_cast<int64_t>(x.size()));
  std::vector<float> got_a(kT * kRows), got_b(kT * kRows);
  const ClippedProduct again[2] = {{&a_, got_a.data()}, {&b_, got_b.data()}};
  ASSERT_TRUE(ShareInputBounds(again));
  ClippedMatMulEach(again, x.data(), kT, scratch, pool, ClippedInput::kClamped);
  EXPECT_EQ(got_a, want_a);
  EXPECT_EQ(got_b, want_b);
  EXPECT_NE(got_a, got_b);  // a_'s output bounds bite

  // kClamped takes the input as given: the raw x gives the product of a linear without input
  // bounds, which differs (the bounds bite on x).
  ClippedLinear unbounded = b_;
  unbounded.in_min = -ClippedLinear::kNone;
  unbounded.in_max = ClippedLinear::kNone;
  std::vector<float> raw(kT * kRows), want_raw(kT * kRows);
  ClippedMatMul(b_, x_.data(), kT, raw.data(), scratch, pool, ClippedInput::kClamped);
  ClippedMatMul(unbounded, x_.data(), kT, want_raw.data(), scratch, pool);
  EXPECT_EQ(raw, want_raw);
  EXPECT_NE(raw, want_b);
}

TEST_P(ClippedLinearTest, OneClampedInputForDifferentBoundsIsAnInternalError) {
  ThreadPool pool(1);
  b_.in_max = 2.0f;
  std::vector<float> y(kT * kRows), z(kT * kRows), scratch;
  const ClippedProduct both[2] = {{&a_, y.data()}, {&b_, z.data()}};
  EXPECT_FALSE(ShareInputBounds(both));
  EXPECT_NE(ErrorOf([&] {
              ClippedMatMulEach(both, x_.data(), kT, scratch, pool, ClippedInput::kClamped);
            }).find("input bounds differ"),
            std::string::npos);
  // Clamping inside serves them: each gets its own clamped copy, as if run alone.
  ClippedMatMulEach(both, x_.data(), kT, scratch, pool);
  std::vector<float> y_alone(kT * kRows), z_alone(kT * kRows);
  ClippedMatMul(a_, x_.data(), kT, y_alone.data(), scratch, pool);
  ClippedMatMul(b_, x_.data(), kT, z_alone.data(), scratch, pool);
  EXPECT_EQ(y, y_alone);
  EXPECT_EQ(z, z_alone);
  b_.in_max = a_.in_max;  // with a_'s input bounds, b_'s products change: b_'s own bit
  ClippedMatMul(b_, x_.data(), kT, z_alone.data(), scratch, pool);
  EXPECT_NE(z, z_alone);
}

INSTANTIATE_TEST_SUITE_P(RowMajorAndPanels, ClippedLinearTest, ::testing::Bool());

}  // namespace
}  // namespace tandem
