// MatMulEach: several products of the same activations in one job give, product by product, the
// bits MatMul gives each alone, on every ISA path, every batch size and thread count, with
// activation formats shared (Q4_0 and Q8_0 both read Q8_0) and not (Q4_1, Q4_K, F16).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"
#include "kernels/matmul.h"
#include "kernels/matmul_repack.h"
#include "tensor/quantize.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;

constexpr int64_t kCols = 512;

// A [rows][kCols] matrix of `type` quantized from a smooth pattern, with a packed copy in the
// active path's layout where the type has one.
struct Matrix {
  Matrix(TensorType type, int64_t rows, float phase)
      : data(testing_kernels::SmoothWeights(type, rows, kCols, phase)),
        w(DenseWeightMatrix(type, data.data(), rows, kCols)) {
    if (HasPackedLayout(type)) {
      copy = PackWeightMatrix(w);
      w = copy.Attach(w);
    }
  }
  std::vector<uint8_t> data;
  WeightMatrix w;
  PackedMatrix copy;
};

TEST(MatMulEach, EachProductIsBitwiseItsOwnMatMul) {
  IsaScope guard;
  for (Isa isa : SupportedIsas()) {
    SetActiveIsa(isa);
    // Q4_0 and Q8_0 share one quantization of x; Q4_1 (Q8_1), Q4_K (Q8_K) and F16 (none) each
    // need their own. The 2100-row Q4_0 matrix makes the work large enough for the pool.
    const Matrix matrices[] = {
        {TensorType::kQ4_0, 48, 0.0f}, {TensorType::kQ8_0, 16, 1.0f},
        {TensorType::kQ4_1, 40, 2.0f}, {TensorType::kQ4_K, 33, 3.0f},
        {TensorType::kF16, 9, 4.0f},   {TensorType::kQ4_0, 2100, 5.0f},
    };
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      for (int64_t T : {1, 2, 3, 4, 5, 8, 17, 40}) {
        SCOPED_TRACE(std::string(IsaName(isa)) + ", " + std::to_string(threads) + " threads, T " +
                     std::to_string(T));
        std::vector<float> x(T * kCols);
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.3f * static_cast<float>(i));
        std::vector<std::vector<float>> alone, together;
        std::vector<MatMulProduct> products;
        for (const Matrix& m : matrices) {
          alone.emplace_back(T * m.w.rows);
          MatMul(m.w, x.data(), T, alone.back().data(), pool);
          together.emplace_back(T * m.w.rows, -1.0f);
        }
        for (size_t i = 0; i < together.size(); ++i) {
          products.push_back({&matrices[i].w, together[i].data()});
        }
        MatMulEach(products, x.data(), T, pool);
        for (size_t i = 0; i < together.size(); ++i) {
          EXPECT_TRUE(BitwiseEqual(together[i], alone[i])) << "product " << i;
        }
        // The small ones alone: under the pool's threshold, on the calling thread.
        for (auto& y : together) std::fill(y.begin(), y.end(), -1.0f);
        MatMulEach({products.data(), 3}, x.data(), T, pool);
        for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(BitwiseEqual(together[i], alone[i])) << i;
      }
    }
  }
}

TEST(MatMulEach, RejectsWhatItCannotShare) {
  ThreadPool pool(2);
  const Matrix a(TensorType::kQ4_0, 16, 0.0f), b(TensorType::kQ8_0, 16, 1.0f);
  std::vector<uint8_t> narrow_data(16 * QuantizedRowBytes(TensorType::kQ4_0, 256));
  const WeightMatrix narrow = DenseWeightMatrix(TensorType::kQ4_0, narrow_data.data(), 16, 256);
  std::vector<float> x(2 * kCols, 0.5f), y(2 * 16 * 9);
  const MatMulProduct mixed[] = {{&a.w, y.data()}, {&narrow, y.data() + 32}};
  EXPECT_THROW(MatMulEach(mixed, x.data(), 2, pool), Error) << "different column counts";
  const MatMulProduct no_matrix[] = {{&a.w, y.data()}, {nullptr, y.data() + 32}};
  EXPECT_THROW(MatMulEach(no_matrix, x.data(), 2, pool), Error);
  std::vector<MatMulProduct> nine(9, MatMulProduct{&b.w, y.data()});
  EXPECT_THROW(MatMulEach(nine, x.data(), 2, pool), Error) << "more than 8 products";
  const MatMulProduct no_output[] = {{&a.w, nullptr}};
  EXPECT_THROW(MatMulEach(no_output, x.data(), 2, pool), Error);
  EXPECT_NO_THROW(MatMulEach({}, x.data(), 2, pool));
  const MatMulProduct same_cols[] = {{&a.w, y.data()}, {&b.w, y.data() + 32}};
  EXPECT_NO_THROW(MatMulEach(same_cols, x.data(), 0, pool));
  EXPECT_THROW(MatMulEach(same_cols, x.data(), -1, pool), Error);
}

}  // namespace
}  // namespace tandem::kernels
