// MatMulPanels: close to float64, and each output bitwise the same alone or in any batch,
// whatever the thread count, on every ISA, for f32/f16/bf16 panels and ragged row counts; on the
// vector ISAs, equal to a chain of fused multiply-adds over the columns in order.
#include "kernels/matmul_panels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"
#include "tensor/float16.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST(MatMulPanelsTest, CloseToFloat64AndBitwiseInAnyBatchOnEveryIsa) {
  struct Case {
    TensorType type;
    int64_t rows, cols, T;
  };
  const Case cases[] = {{TensorType::kF16, 64, 96, 30},
                        {TensorType::kF32, 40, 33, 13},
                        {TensorType::kBF16, 16, 48, 1},
                        {TensorType::kF16, 8, 16, 25},
                        // An odd panel count and a partial panel over many tiles of rows.
                        {TensorType::kF16, 40, 600, 200},
                        // 16-bit panels are widened a block at a time (simd/panels-inl.h):
                        // 45 panels of 600 columns are three blocks on one thread, the last
                        // partial (two on each of two threads).
                        {TensorType::kBF16, 45 * 16, 600, 13},
                        // One group of panels for two threads: the rows are split too.
                        {TensorType::kF32, 32, 70, 200},
                        {TensorType::kF32, 24, 257, 97}};
  ThreadPool one(1), two(2);
  for (const Case& c : cases) {
    const std::vector<float> wf = Random(c.rows * c.cols, 1), x = Random(c.T * c.cols, 2);
    std::vector<uint16_t> half(wf.size());
    std::vector<double> exact(wf.size());
    for (size_t i = 0; i < wf.size(); ++i) {
      half[i] = c.type == TensorType::kF16 ? Fp32ToFp16(wf[i]) : Fp32ToBf16(wf[i]);
      exact[i] = c.type == TensorType::kF32   ? wf[i]
                 : c.type == TensorType::kF16 ? Fp16ToFp32(half[i])
                                              : Bf16ToFp32(half[i]);
    }
    const void* data = c.type == TensorType::kF32 ? static_cast<const void*>(wf.data())
                                                  : static_cast<const void*>(half.data());
    const PanelMatrix p = PackPanels(DenseWeightMatrix(c.type, data, c.rows, c.cols));
    for (Isa isa : SupportedIsas()) {
      IsaScope scope(isa);
      std::vector<float> all(c.T * c.rows, -7.0f), all1(all.size());
      MatMulPanels(p, x.data(), c.T, all.data(), two);
      MatMulPanels(p, x.data(), c.T, all1.data(), one);
      EXPECT_TRUE(BitwiseEqual(all, all1)) << IsaName(isa);
      for (int64_t t = 0; t < c.T; ++t) {
        std::vector<float> alone(c.rows);
        MatMulPanels(p, x.data() + t * c.cols, 1, alone.data(), two);
        EXPECT_TRUE(BitwiseEqual(alone.data(), all.data() + t * c.rows, c.rows))
            << IsaName(isa) << " row " << t;
        for (int64_t r = 0; r < c.rows; ++r) {
          double want = 0;
          float chain = 0.0f;  // the vector kernels' sum: one fused multiply-add per column
          for (int64_t i = 0; i < c.cols; ++i) {
            want += exact[r * c.cols + i] * x[t * c.cols + i];
            chain = std::fma(x[t * c.cols + i], static_cast<float>(exact[r * c.cols + i]), chain);
          }
          ASSERT_NEAR(all[t * c.rows + r], want, 1e-4 * std::sqrt(c.cols / 16.0))
              << IsaName(isa) << " " << t << "," << r;
          if (isa != Isa::kScalar) {
            ASSERT_EQ(all[t * c.rows + r], chain) << IsaName(isa) << " " << t << "," << r;
          }
        }
      }
    }
  }
}

// Bounds clamp each output as it is stored: the same as clamping the unbounded product, NaN kept.
TEST(MatMulPanelsTest, BoundsClampEachOutputAsTheScalarClampDoes) {
  const int64_t rows = 40, cols = 50, T = 14;
  const std::vector<float> wf = Random(rows * cols, 3);
  std::vector<float> x = Random(T * cols, 4);
  x[3 * cols + 7] = std::nanf("");  // row 3's outputs are NaN
  std::vector<uint16_t> half(wf.size());
  for (size_t i = 0; i < wf.size(); ++i) half[i] = Fp32ToFp16(wf[i]);
  const PanelMatrix p = PackPanels(DenseWeightMatrix(TensorType::kF16, half.data(), rows, cols));
  ThreadPool two(2);
  const float lo = -0.5f, hi = 0.25f;
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    std::vector<float> free(T * rows), bounded(T * rows);
    MatMulPanels(p, x.data(), T, free.data(), two);
    MatMulPanels(p, x.data(), T, bounded.data(), two, lo, hi);
    int clamped = 0;
    for (size_t i = 0; i < free.size(); ++i) {
      const float v = free[i], want = v < lo ? lo : (v > hi ? hi : v);
      clamped += want != v;
      if (std::isnan(v)) {
        ASSERT_TRUE(std::isnan(bounded[i])) << IsaName(isa) << " " << i;
      } else {
        ASSERT_EQ(bounded[i], want) << IsaName(isa) << " " << i;
      }
    }
    EXPECT_GT(clamped, 50) << IsaName(isa);  // the bounds cut on both sides
    EXPECT_TRUE(std::isnan(bounded[3 * rows])) << IsaName(isa);
  }
}

TEST(MatMulPanelsTest, OnlyFloatTypesArePacked) {
  std::vector<uint8_t> q(34 * 4);
  EXPECT_THROW(PackPanels(DenseWeightMatrix(TensorType::kQ8_0, q.data(), 4, 32)), Error);
  EXPECT_FALSE(CanPackPanels(TensorType::kQ4_0));
  EXPECT_TRUE(CanPackPanels(TensorType::kBF16));
}

}  // namespace
}  // namespace tandem::kernels
