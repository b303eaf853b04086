// Row ops and RoPE: each ISA against double-precision formulas and against the scalar path
// (NMSE), plus bitwise invariance within each ISA (row alone vs in a batch, offsets, threads).
#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"
#include "kernels/ops_isa.h"
#include "tensor/float16.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;
using testing_kernels::Nmse;

std::vector<float> RandomVector(int64_t n, uint32_t seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

double Nmse(const std::vector<float>& a, const std::vector<float>& b) {
  return Nmse(a, std::vector<double>(b.begin(), b.end()));
}

// 0.5·x·(1 + tanh u) in double, written as x / (1 + e^(-2u)) so the negative tail is exact too.
double GeluU(double x) {
  return std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
}
double GeluDouble(double x) {
  return x / (1.0 + std::exp(-2.0 * GeluU(x)));
}

const std::vector<int64_t> kLengths = {1,  2,  7,  8,  9,   15,  16,   17,  31,
                                       33, 63, 64, 65, 100, 256, 1536, 5376};

// One op under test as a row function y = f(x) of length n.
using RowOp = void (*)(const float* x, int64_t n, float* y);

void RmsNormWithWeight(const float* x, int64_t n, float* y) {
  std::vector<float> w = RandomVector(n, 99, 0.6f, 1.4f);
  RmsNorm(x, w.data(), 1e-6f, n, y);
}
void RmsNormNoWeight(const float* x, int64_t n, float* y) {
  RmsNorm(x, nullptr, 1e-6f, n, y);
}
void GeluOp(const float* x, int64_t n, float* y) {
  Gelu(x, n, y);
}
void GeGluOp(const float* x, int64_t n, float* y) {
  std::vector<float> up = RandomVector(n, 7);
  GeGlu(x, up.data(), n, y);
}
void SiluOp(const float* x, int64_t n, float* y) {
  Silu(x, n, y);
}
void SigmoidGluOp(const float* x, int64_t n, float* y) {
  std::vector<float> value = RandomVector(n, 8);
  SigmoidGlu(value.data(), x, n, y);
}
void SoftcapOp(const float* x, int64_t n, float* y) {
  Softcap(x, 30.0f, n, y);
}
void SoftmaxOp(const float* x, int64_t n, float* y) {
  Softmax(x, n, y);
}

struct NamedOp {
  const char* name;
  RowOp op;
};
const NamedOp kOps[] = {{"rms_norm", RmsNormWithWeight},
                        {"rms_norm_no_weight", RmsNormNoWeight},
                        {"gelu", GeluOp},
                        {"geglu", GeGluOp},
                        {"silu", SiluOp},
                        {"sigmoid_glu", SigmoidGluOp},
                        {"softcap", SoftcapOp},
                        {"softmax", SoftmaxOp}};

TEST(OpsTest, RmsNormMatchesDouble) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      SCOPED_TRACE(std::string(IsaName(isa)) + " n=" + std::to_string(n));
      const std::vector<float> x = RandomVector(n, 1);
      const std::vector<float> w = RandomVector(n, 2, 0.6f, 1.4f);
      double ss = 0;
      for (float v : x) ss += static_cast<double>(v) * v;
      const double inv = 1.0 / std::sqrt(ss / n + 1e-6);
      std::vector<double> want(n), want_nw(n);
      for (int64_t i = 0; i < n; ++i) {
        want_nw[i] = x[i] * inv;
        want[i] = want_nw[i] * w[i];
      }
      std::vector<float> y(n), y_nw(n);
      RmsNorm(x.data(), w.data(), 1e-6f, n, y.data());
      RmsNorm(x.data(), nullptr, 1e-6f, n, y_nw.data());
      EXPECT_LT(Nmse(y, want), 1e-12);
      EXPECT_LT(Nmse(y_nw, want_nw), 1e-12);
      // In place gives the same bits.
      std::vector<float> inplace = x;
      RmsNorm(inplace.data(), w.data(), 1e-6f, n, inplace.data());
      EXPECT_TRUE(BitwiseEqual(inplace.data(), y.data(), n));
    }
  }
}

TEST(OpsTest, RmsNormOfZerosIsZero) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    std::vector<float> x(40, 0.0f), y(40, 1.0f);
    RmsNorm(x.data(), nullptr, 1e-6f, 40, y.data());
    for (float v : y) EXPECT_EQ(v, 0.0f) << IsaName(isa);
  }
}

TEST(OpsTest, GeluMatchesDoubleTanhFormula) {
  std::vector<float> x = RandomVector(4099, 3, -12.0f, 12.0f);
  for (float v :
       {0.0f, 1e-8f, -1e-8f, 0.1f, -0.1f, 0.3f, 5.0f, -5.0f, 40.0f, -40.0f, 1e4f, -1e4f}) {
    x.push_back(v);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    std::vector<float> y(n);
    Gelu(x.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double want = GeluDouble(x[i]);
      // Relative accuracy everywhere, also in the tiny negative tail, where the f32 rounding of
      // u (relative 1e-7) is amplified by e^(-2u) to about 2|u|·1e-7.
      const double tol = (2e-6 + 4e-7 * std::fabs(GeluU(x[i]))) * std::fabs(want) + 1e-37;
      EXPECT_NEAR(y[i], want, tol) << IsaName(isa) << " x=" << x[i];
    }
    EXPECT_EQ(y[n - 12], 0.0f);  // gelu(0)
    EXPECT_EQ(y[n - 4], 40.0f);  // saturates to x
    EXPECT_EQ(y[n - 3], 0.0f);   // saturates to 0
    EXPECT_EQ(y[n - 2], 1e4f);
  }
}

TEST(OpsTest, SiluAndSigmoidGluMatchDouble) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      SCOPED_TRACE(std::string(IsaName(isa)) + " n=" + std::to_string(n));
      std::vector<float> x = RandomVector(n, 3, -12.0f, 12.0f);
      const std::vector<float> v = RandomVector(n, 4);
      if (n > 2) x[0] = -100.0f, x[1] = 100.0f;  // past exp's range either way
      std::vector<float> y(n), g(n);
      Silu(x.data(), n, y.data());
      SigmoidGlu(v.data(), x.data(), n, g.data());
      for (int64_t i = 0; i < n; ++i) {
        const double s = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
        EXPECT_NEAR(y[i], x[i] * s, 4e-7 * std::fabs(x[i] * s) + 1e-37) << i;
        EXPECT_NEAR(g[i], v[i] * s, 4e-7 * std::fabs(v[i] * s) + 1e-37) << i;
      }
    }
  }
}

TEST(OpsTest, GeGluIsGeluTimesUpBitwise) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (int64_t n : kLengths) {
      const std::vector<float> g = RandomVector(n, 4, -6.0f, 6.0f);
      const std::vector<float> u = RandomVector(n, 5);
      std::vector<float> y(n), gelu(n);
      GeGlu(g.data(), u.data(), n, y.data());
      Gelu(g.data(), n, gelu.data());
      for (int64_t i = 0; i < n; ++i) gelu[i] *= u[i];
      EXPECT_TRUE(BitwiseEqual(y.data(), gelu.data(), n)) << IsaName(isa) << " n=" << n;
    }
  }
}

// The f16 KV cache's conversion: every path gives the reference's bits, NaNs (canonical there,
// payload-keeping in the instruction) and rounding ties included.
TEST(OpsTest, ToHalfIsTheReferenceConversionBitwise) {
  std::vector<float> x;
  for (uint32_t bits :
       {0x00000000u, 0x80000000u, 0x3F800000u, 0xBF800000u, 0x477FE000u, 0x477FEFFFu,
        0x477FF000u, 0x501502F9u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7FA00001u,
        0xFFC12345u, 0x33800000u, 0x33000000u, 0x33C00000u, 0x35800000u, 0x00000001u,
        0x807FFFFFu, 0x3F801000u, 0x3F803000u, 0x387FE000u, 0x387FF000u, 0x38800000u}) {
    x.push_back(std::bit_cast<float>(bits));
  }
  std::mt19937 rng(53);
  while (x.size() < 4096) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  std::vector<uint16_t> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = Fp32ToFp16(x[i]);
  const std::vector<float> finite = RandomVector(64, 54, -70000.0f, 70000.0f);
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{16}, int64_t{33}, int64_t{4096}}) {
      std::vector<uint16_t> got(n, 0xDEAD);
      ToHalf(x.data(), n, got.data());
      EXPECT_TRUE(std::equal(got.begin(), got.end(), want.begin())) << IsaName(isa) << " n=" << n;
    }
    std::vector<uint16_t> got(finite.size());
    ToHalf(finite.data(), 64, got.data());
    for (size_t i = 0; i < finite.size(); ++i) {
      EXPECT_EQ(got[i], Fp32ToFp16(finite[i])) << IsaName(isa) << " " << finite[i];
    }
  }
}

TEST(OpsTest, GeGluAndSoftcapOverAPoolAreBitwiseTheSame) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      for (int64_t n : {int64_t{5}, int64_t{16383}, int64_t{16384}, int64_t{3 * 8192 + 5}}) {
        const std::vector<float> g = RandomVector(n, 6, -6.0f, 6.0f);
        const std::vector<float> u = RandomVector(n, 7, -90.0f, 90.0f);
        std::vector<float> alone(n), spread(n, -1.0f);
        GeGlu(g.data(), u.data(), n, alone.data());
        GeGlu(g.data(), u.data(), n, spread.data(), pool);
        EXPECT_TRUE(BitwiseEqual(spread.data(), alone.data(), n))
            << IsaName(isa) << " GeGLU, threads " << threads << " n=" << n;
        std::fill(spread.begin(), spread.end(), -1.0f);
        Softcap(u.data(), 30.0f, n, alone.data());
        Softcap(u.data(), 30.0f, n, spread.data(), pool);
        EXPECT_TRUE(BitwiseEqual(spread.data(), alone.data(), n))
            << IsaName(isa) << " softcap, threads " << threads << " n=" << n;
      }
    }
  }
}

TEST(OpsTest, SoftcapMatchesDouble) {
  std::vector<float> x = RandomVector(5000, 6, -200.0f, 200.0f);
  for (float v : {0.0f, 1e-6f, -1e-6f, 0.5f, 7.4f, -7.6f, 1e6f, -1e6f}) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    std::vector<float> y(n);
    Softcap(x.data(), 30.0f, n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double want = 30.0 * std::tanh(x[i] / 30.0);
      EXPECT_NEAR(y[i], want, 4e-7 * 30.0) << IsaName(isa) << " x=" << x[i];
      EXPECT_LE(std::fabs(y[i]), 30.0f);
    }
    EXPECT_EQ(y[n - 8], 0.0f);
    EXPECT_EQ(y[n - 2], 30.0f);
    EXPECT_EQ(y[n - 1], -30.0f);
  }
}

TEST(OpsTest, SoftmaxMatchesDoubleAndSumsToOne) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (int64_t n : {1, 3, 8, 16, 17, 128, 1000, 262144}) {
      SCOPED_TRACE(std::string(IsaName(isa)) + " n=" + std::to_string(n));
      const std::vector<float> x = RandomVector(n, 8, -20.0f, 20.0f);
      double max = -INFINITY, sum = 0;
      for (float v : x) max = std::max<double>(max, v);
      std::vector<double> want(n);
      for (int64_t i = 0; i < n; ++i) sum += want[i] = std::exp(x[i] - max);
      for (auto& w : want) w /= sum;
      std::vector<float> y(n);
      Softmax(x.data(), n, y.data());
      EXPECT_LT(Nmse(y, want), 1e-12);
      double total = 0;
      for (float v : y) total += v;
      EXPECT_NEAR(total, 1.0, 1e-5);
    }
    const float one[1] = {123.0f};
    float out[1];
    Softmax(one, 1, out);
    EXPECT_EQ(out[0], 1.0f);
    // A dominant logit takes all the mass; very negative ones underflow to 0.
    std::vector<float> peaked(20, -1000.0f);
    peaked[13] = 50.0f;
    std::vector<float> y(20);
    Softmax(peaked.data(), 20, y.data());
    EXPECT_EQ(y[13], 1.0f);
    EXPECT_EQ(y[0], 0.0f);
  }
}

TEST(OpsTest, SimdPathsMatchScalarNmse) {
  for (Isa isa : SupportedIsas()) {
    if (isa == Isa::kScalar) continue;
    for (const NamedOp& op : kOps) {
      for (int64_t n : kLengths) {
        SCOPED_TRACE(std::string(IsaName(isa)) + " " + op.name + " n=" + std::to_string(n));
        const std::vector<float> x = RandomVector(n, 10 + static_cast<uint32_t>(n), -8.0f, 8.0f);
        std::vector<float> want(n), got(n);
        {
          IsaScope scope(Isa::kScalar);
          op.op(x.data(), n, want.data());
        }
        {
          IsaScope scope(isa);
          op.op(x.data(), n, got.data());
        }
        EXPECT_LT(Nmse(got, want), 1e-12);
      }
    }
  }
}

TEST(OpsTest, ExpPathsMatchStdExp) {
  std::vector<float> x = RandomVector(3000, 11, -87.0f, 88.0f);
  for (float v : {0.0f, -1e-7f, 1.0f, -1.0f, 0.34657f, -0.34658f}) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> y(n);
  for (Isa isa : SupportedIsas()) {
    if (isa == Isa::kAvx2) avx2::Exp(x.data(), n, y.data());
    if (isa == Isa::kAvx512) avx512::Exp(x.data(), n, y.data());
    if (isa == Isa::kScalar) ref::Exp(x.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i) {
      const double want = std::exp(static_cast<double>(x[i]));
      EXPECT_NEAR(y[i] / want, 1.0, 5e-7) << IsaName(isa) << " x=" << x[i];
    }
  }
}

// A row's result must not depend on its neighbours, its address (alignment) or the batch size.
TEST(OpsTest, RowResultIndependentOfPlacement) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (const NamedOp& op : kOps) {
      for (int64_t n : {5, 16, 37, 256}) {
        SCOPED_TRACE(std::string(IsaName(isa)) + " " + op.name + " n=" + std::to_string(n));
        const std::vector<float> row = RandomVector(n, 20);
        std::vector<float> alone(n);
        op.op(row.data(), n, alone.data());
        for (int offset = 1; offset < 17; offset += 3) {
          std::vector<float> batch = RandomVector(offset + 3 * n, 21 + offset);
          std::copy(row.begin(), row.end(), batch.begin() + offset + n);
          std::vector<float> out(batch.size());
          for (int r = 0; r < 3; ++r)
            op.op(batch.data() + offset + r * n, n, out.data() + offset + r * n);
          EXPECT_TRUE(BitwiseEqual(out.data() + offset + n, alone.data(), n))
              << "offset " << offset;
        }
      }
    }
  }
}

TEST(OpsTest, RmsNormRowsIndependentOfThreadsAndBatch) {
  const int64_t n = 256, max_rows = 13;
  const std::vector<float> x = RandomVector(n * max_rows, 30);
  const std::vector<float> w = RandomVector(n, 31, 0.6f, 1.4f);
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    std::vector<float> want(n * max_rows);
    for (int64_t r = 0; r < max_rows; ++r)
      RmsNorm(x.data() + r * n, w.data(), 1e-6f, n, want.data() + r * n);
    for (int threads = 1; threads <= 4; ++threads) {
      ThreadPool pool(threads);
      for (int64_t rows : {1, 2, 5, 13}) {
        const int64_t first = max_rows - rows;  // the same tokens at different batch positions
        std::vector<float> got(n * rows);
        RmsNormRows(x.data() + first * n, n, w.data(), 1e-6f, n, rows, got.data(), n, &pool);
        EXPECT_TRUE(BitwiseEqual(got.data(), want.data() + first * n, n * rows))
            << IsaName(isa) << " threads " << threads << " rows " << rows;
      }
    }
  }
}

TEST(OpsTest, AddAndScaleAreExact) {
  const std::vector<float> a = RandomVector(19, 40), b = RandomVector(19, 41);
  std::vector<float> y(19);
  Add(a.data(), b.data(), 19, y.data());
  for (int i = 0; i < 19; ++i) EXPECT_EQ(y[i], a[i] + b[i]);
  Scale(a.data(), 0.75f, 19, y.data());
  for (int i = 0; i < 19; ++i) EXPECT_EQ(y[i], a[i] * 0.75f);
}

// ---- RoPE ----

// Double-precision NEOX rotation of one head with the same f32 angles the kernel uses.
std::vector<double> RopeDouble(const std::vector<float>& head, const Rope& rope, int32_t pos) {
  std::vector<double> out(head.begin(), head.end());
  const int half = rope.n_rot() / 2;
  for (int i = 0; i < half; ++i) {
    const double angle = static_cast<float>(pos) * rope.inv_freq()[i];
    out[i] = head[i] * std::cos(angle) - head[i + half] * std::sin(angle);
    out[i + half] = head[i] * std::sin(angle) + head[i + half] * std::cos(angle);
  }
  return out;
}

TEST(RopeTest, NeoxFrequenciesAndRotation) {
  const Rope rope = Rope::Neox(256, 256, 10000.0f);
  ASSERT_EQ(rope.inv_freq().size(), 128u);
  for (int i = 0; i < 128; ++i) {
    EXPECT_FLOAT_EQ(rope.inv_freq()[i], static_cast<float>(std::pow(10000.0, -2.0 * i / 256)));
  }
  const int n_heads = 3;
  const std::vector<int32_t> positions = {0, 1, 17, 511, 4095, 131071};
  std::vector<float> x = RandomVector(positions.size() * n_heads * 256, 50);
  const std::vector<float> original = x;
  rope.Apply(x.data(), positions.size(), n_heads * 256, n_heads, positions.data());
  for (size_t r = 0; r < positions.size(); ++r) {
    for (int h = 0; h < n_heads; ++h) {
      const size_t at = (r * n_heads + h) * 256;
      std::vector<float> head(original.begin() + at, original.begin() + at + 256);
      std::vector<float> got(x.begin() + at, x.begin() + at + 256);
      EXPECT_LT(Nmse(got, RopeDouble(head, rope, positions[r])), 1e-13) << "pos " << positions[r];
      if (positions[r] == 0) {
        EXPECT_TRUE(BitwiseEqual(got.data(), head.data(), 256));
      }
    }
  }
}

TEST(RopeTest, PartialNeoxLeavesTailDims) {
  const Rope rope = Rope::Neox(64, 32, 10000.0f);
  std::vector<float> x = RandomVector(2 * 64, 51);
  const std::vector<float> original = x;
  const int32_t pos = 9;
  rope.Apply(x.data(), 1, 128, 2, &pos);
  for (int h = 0; h < 2; ++h) {
    for (int d = 32; d < 64; ++d) EXPECT_EQ(x[h * 64 + d], original[h * 64 + d]);
    // Pair (i, i + 16) rotates: its length is kept.
    for (int i = 0; i < 16; ++i) {
      const float a = original[h * 64 + i], b = original[h * 64 + i + 16];
      const float c = x[h * 64 + i], d = x[h * 64 + i + 16];
      EXPECT_NEAR(a * a + b * b, c * c + d * d, 1e-5f);
    }
  }
}

TEST(RopeTest, ProportionalMatchesFreqFactorsAndPassesThrough) {
  // Gemma 4 full layers: head_dim 512, theta 1e6, partial 0.25 -> 64 rotated pairs (i, i+256).
  const Rope native = Rope::Proportional(512, 1e6f, 0.25f);
  std::vector<float> factors(256, 1e30f);
  std::fill(factors.begin(), factors.begin() + 64, 1.0f);
  const Rope via_factors = Rope::Neox(512, 512, 1e6f, factors);
  ASSERT_EQ(native.inv_freq().size(), 256u);
  for (int i = 0; i < 256; ++i) {
    const float want = i < 64 ? static_cast<float>(std::pow(1e6, -2.0 * i / 512)) : 0.0f;
    EXPECT_EQ(native.inv_freq()[i], want) << i;
    EXPECT_EQ(via_factors.inv_freq()[i], want) << i;
  }
  const std::vector<int32_t> positions = {3, 1000, 70000};
  std::vector<float> a = RandomVector(3 * 2 * 512, 52);
  const std::vector<float> original = a;
  std::vector<float> b = a;
  native.Apply(a.data(), 3, 1024, 2, positions.data());
  via_factors.Apply(b.data(), 3, 1024, 2, positions.data());
  EXPECT_TRUE(BitwiseEqual(a.data(), b.data(), a.size()));
  for (size_t head = 0; head < 6; ++head) {
    for (int d = 0; d < 512; ++d) {
      const bool rotated = d < 64 || (d >= 256 && d < 320);
      const size_t at = head * 512 + d;
      if (!rotated) {
        EXPECT_EQ(a[at], original[at]) << "dim " << d;
      } else if (d == 1) {
        EXPECT_NE(a[at], original[at]);
      }
    }
  }
  // The tiny fixture's full layers: head_dim 64 -> 8 rotated pairs.
  const Rope tiny = Rope::Proportional(64, 1e6f, 0.25f);
  EXPECT_NE(tiny.inv_freq()[7], 0.0f);
  EXPECT_EQ(tiny.inv_freq()[8], 0.0f);
}

TEST(RopeTest, ScoresDependOnRelativePosition) {
  const Rope rope = Rope::Neox(64, 64, 10000.0f);
  const std::vector<float> q0 = RandomVector(64, 53), k0 = RandomVector(64, 54);
  auto score = [&](int32_t qp, int32_t kp) {
    std::vector<float> q = q0, k = k0;
    rope.Apply(q.data(), 1, 64, 1, &qp);
    rope.Apply(k.data(), 1, 64, 1, &kp);
    double s = 0;
    for (int i = 0; i < 64; ++i) s += static_cast<double>(q[i]) * k[i];
    return s;
  };
  EXPECT_NEAR(score(10, 3), score(107, 100), 1e-4);
  EXPECT_NEAR(score(5, 5), score(900, 900), 1e-4);
}

// A forward computes each distinct Rope's angles once and every layer applies them: the bits of
// Apply, with un-rotated pairs (here also between rotated runs) passed through exactly.
TEST(RopeTest, SharedAnglesGiveApplysBits) {
  std::vector<float> factors(32, 1.0f);
  for (int i : {3, 4, 10, 31}) factors[i] = 1e30f;
  const Rope ropes[] = {Rope::Neox(256, 256, 10000.0f), Rope::Proportional(512, 1e6f, 0.25f),
                        Rope::Neox(64, 64, 10000.0f, factors), Rope::Neox(64, 32, 10000.0f)};
  const std::vector<int32_t> positions = {0, 5, 4095, 131071};
  const int n_heads = 2;
  for (const Rope& rope : ropes) {
    const int hd = rope.head_dim();
    const std::vector<float> original = RandomVector(positions.size() * n_heads * hd, 52);
    std::vector<float> applied = original, shared = original;
    rope.Apply(applied.data(), positions.size(), n_heads * hd, n_heads, positions.data());
    std::vector<float> angles(positions.size() * rope.n_rot(), -7.0f);
    rope.Angles(positions.data(), positions.size(), angles.data());
    rope.ApplyAngles(shared.data(), positions.size(), n_heads * hd, n_heads, angles.data());
    EXPECT_TRUE(BitwiseEqual(shared.data(), applied.data(), applied.size())) << "head_dim " << hd;
    const int half = rope.n_rot() / 2;
    for (size_t r = 1; r < positions.size(); ++r) {
      for (int i = 0; i < half; ++i) {
        const size_t at = r * n_heads * hd + i;
        if (rope.inv_freq()[i] == 0.0f) {
          EXPECT_EQ(shared[at], original[at]) << "un-rotated pair " << i;
          EXPECT_EQ(shared[at + half], original[at + half]) << "un-rotated pair " << i;
        } else {
          EXPECT_NE(shared[at], original[at]) << "rotated pair " << i;
        }
      }
    }
  }
  EXPECT_TRUE(Rope::Neox(256, 256, 1e4f) == Rope::Neox(256, 256, 1e4f));
  EXPECT_FALSE(Rope::Neox(256, 256, 1e4f) == Rope::Neox(256, 256, 1e6f));
  EXPECT_FALSE(Rope::Neox(64, 64, 1e4f) == Rope::Neox(64, 64, 1e4f, factors));
}

TEST(RopeTest, RejectsBadShapes) {
  EXPECT_THROW(Rope::Neox(64, 65, 1e4f), Error);
  EXPECT_THROW(Rope::Neox(64, 128, 1e4f), Error);
  EXPECT_THROW(Rope::Neox(64, 64, 0.0f), Error);
  const std::vector<float> short_factors(10, 1.0f);
  EXPECT_THROW(Rope::Neox(64, 64, 1e4f, short_factors), Error);
  const std::vector<float> bad_factors(32, -1.0f);
  EXPECT_THROW(Rope::Neox(64, 64, 1e4f, bad_factors), Error);
  EXPECT_THROW(Rope::Proportional(64, 1e6f, 0.0f), Error);
  try {
    Rope::Neox(64, 63, 1e4f);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("n_rot 63"), std::string::npos);
  }
}

}  // namespace
}  // namespace tandem::kernels
