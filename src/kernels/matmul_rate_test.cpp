// FirstRows (a matrix's leading rows, its packed copy's too) and MatMulComputeRate, which times
// MatMul on such a slice.
#include "kernels/matmul_rate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/error.h"
#include "kernels/kernel_test_util.h"
#include "kernels/matmul.h"
#include "kernels/matmul_repack.h"

namespace tandem::kernels {
namespace {

constexpr int64_t kRows = 192, kCols = 256;

std::vector<uint8_t> Q4_0Matrix() {
  return testing_kernels::SmoothWeights(TensorType::kQ4_0, kRows, kCols);
}

TEST(FirstRows, AreTheMatrixsFirstRowsInEveryLayout) {
  const std::vector<uint8_t> data = Q4_0Matrix();
  const WeightMatrix dense = DenseWeightMatrix(TensorType::kQ4_0, data.data(), kRows, kCols);
  const PackedMatrix copy = PackWeightMatrix(dense);
  ThreadPool pool(2);
  const int64_t T = 3;
  std::vector<float> x(T * kCols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * static_cast<float>(i));
  for (const WeightMatrix& w : {dense, copy.Attach(dense)}) {
    std::vector<float> all(T * kRows), first(T * 64);
    MatMul(w, x.data(), T, all.data(), pool);
    MatMul(FirstRows(w, 64), x.data(), T, first.data(), pool);
    for (int64_t t = 0; t < T; ++t) {
      EXPECT_TRUE(testing_kernels::BitwiseEqual(first.data() + t * 64, all.data() + t * kRows, 64))
          << "row " << t << (w.packed != nullptr ? ", packed" : ", dense");
    }
  }
  EXPECT_EQ(FirstRows(dense, 5).rows, 5);
  EXPECT_THROW(FirstRows(copy.Attach(dense), copy.group_rows() + 1), Error)
      << "a packed prefix is whole groups";
  EXPECT_THROW(FirstRows(dense, kRows + 1), Error);
  EXPECT_THROW(FirstRows(dense, -1), Error);
}

TEST(MatMulComputeRate, IsAFiniteRateForEveryBatchAndSlice) {
  const std::vector<uint8_t> data = Q4_0Matrix();
  const WeightMatrix dense = DenseWeightMatrix(TensorType::kQ4_0, data.data(), kRows, kCols);
  const PackedMatrix copy = PackWeightMatrix(dense);
  ThreadPool pool(2);
  for (const WeightMatrix& w : {dense, copy.Attach(dense)}) {
    for (int64_t T : {1, 8}) {
      for (size_t slice : {size_t{0}, size_t{1}}) {  // half the cache (all rows), 64 rows
        const double rate = MatMulComputeRate(w, T, pool, slice);
        EXPECT_TRUE(std::isfinite(rate) && rate > 0) << "T " << T << ": " << rate;
      }
    }
  }
  EXPECT_THROW(MatMulComputeRate(dense, 0, pool), Error);
}

}  // namespace
}  // namespace tandem::kernels
