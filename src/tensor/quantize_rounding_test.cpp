// The two rounding rules (roundf vs nearest_int) that bit-exactness with ggml depends on, and the
// K-quants' requantization ties.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "tensor/dequantize.h"
#include "tensor/float16.h"
#include "tensor/quantize.h"
#include "tensor/quantize_test_util.h"

namespace tandem {
namespace {

using namespace quantize_testing;

// ---- Rounding rules ----

TEST(QuantizeTest, NearestIntRoundsHalfToEven) {
  EXPECT_EQ(NearestInt(0.5f), 0);
  EXPECT_EQ(NearestInt(1.5f), 2);
  EXPECT_EQ(NearestInt(2.5f), 2);
  EXPECT_EQ(NearestInt(-0.5f), 0);
  EXPECT_EQ(NearestInt(-1.5f), -2);
  EXPECT_EQ(NearestInt(-2.5f), -2);
  EXPECT_EQ(NearestInt(1.4999999f), 1);
  EXPECT_EQ(NearestInt(-127.0f), -127);
  EXPECT_EQ(NearestInt(4194303.0f), 4194303);
}

TEST(QuantizeTest, Q8_0RoundsHalfAwayFromZero) {
  // amax = 127 makes d = 1 and 1/d = 1, so the codes are roundf(x) directly.
  std::vector<float> x(32, 0.0f);
  const float in[] = {127, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, -1.5f, 0.49999997f, -126.5f};
  const int want[] = {127, 3, -3, 1, -1, 2, -2, 0, -127};
  std::copy(std::begin(in), std::end(in), x.begin());
  BlockQ8_0 b0;
  QuantizeRowQ8_0(x.data(), &b0, 32);
  BlockQ8_1 b1;
  QuantizeRowQ8_1(x.data(), &b1, 32);
  EXPECT_EQ(b0.d, 0x3C00);
  int sum = 0;
  for (int i = 0; i < 9; ++i) {
    EXPECT_EQ(b0.qs[i], want[i]) << in[i];
    EXPECT_EQ(b1.qs[i], want[i]) << in[i];
    sum += want[i];
  }
  EXPECT_EQ(b1.s, Fp32ToFp16(static_cast<float>(sum)));  // s = d * sum(qs), d = 1
}

TEST(QuantizeTest, Q8_KRoundsHalfToEven) {
  // max = -127 makes iscale = 1 and d = 1.
  std::vector<float> x(256, 0.0f);
  const float in[] = {-127, 2.5f, -2.5f, 0.5f, -0.5f, 1.5f, 3.5f, 126.5f};
  const int want[] = {-127, 2, -2, 0, 0, 2, 4, 126};
  std::copy(std::begin(in), std::end(in), x.begin());
  BlockQ8_K b;
  QuantizeRowQ8_K(x.data(), &b, 256);
  EXPECT_EQ(b.d, 1.0f);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b.qs[i], want[i]) << in[i];
  EXPECT_EQ(b.bsums[0], -127 + 2 - 2 + 0 + 0 + 2 + 4 + 126);
}

TEST(QuantizeTest, Q8_KNegativeScaleForPositiveMax) {
  std::vector<float> x(256, 0.0f);
  x[0] = 127.0f;
  x[1] = -63.5f;
  BlockQ8_K b;
  QuantizeRowQ8_K(x.data(), &b, 256);
  EXPECT_EQ(b.d, -1.0f);  // iscale = -127/127
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[1], 64);  // nearest_int(63.5) = 64 (even)
}

TEST(QuantizeTest, Q4_0TruncationRoundsHalfUp) {
  // max = -8 makes d = 1; q = trunc(x + 8.5), so ties go up: 0.5 -> 1, -0.5 -> 0, -1.5 -> -1.
  std::vector<float> x(32, 0.0f);
  const float in[] = {-8, 0.5f, -0.5f, 1.5f, -1.5f, 7.5f, 7.0f};
  const float want[] = {-8, 1, 0, 2, -1, 7, 7};  // 7.5 is clamped to code 15
  std::copy(std::begin(in), std::end(in), x.begin());
  std::vector<BlockQ4_0> b(1);
  QuantizeRowQ4_0(x.data(), b.data(), 32);
  EXPECT_EQ(b[0].d, 0x3C00);
  const auto y = Dequantize(TensorType::kQ4_0, b.data(), 32);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(y[i], want[i]) << in[i];
}

// The re-quantization step of Q2_K and Q3_K rounds x / D half to even, D the sub-block's
// decoded scale. D comes out of the scale search over the whole block, so the tie values are
// found by iteration: set them to t·D, encode, read D again, until D no longer moves (fp16
// scales make that quick).
template <typename Block>
std::vector<float> EncodeWithTies(TensorType type, std::vector<float> x, const std::vector<int>& at,
                                  const std::vector<float>& t,
                                  float (*scale_of_group0)(const Block&), float* big_d) {
  for (int iteration = 0; iteration < 10; ++iteration) {
    Block b;
    QuantizeRow(type, x.data(), &b, 256);
    *big_d = scale_of_group0(b);
    bool moved = false;
    for (size_t i = 0; i < at.size(); ++i) {
      const float want = t[i] * *big_d;
      moved |= x[at[i]] != want;
      x[at[i]] = want;
    }
    if (!moved) return Dequantize(type, &b, 256);
  }
  ADD_FAILURE() << TensorTypeName(type) << ": the ties did not settle";
  return {};
}

TEST(QuantizeTest, Q3_KRequantizesHalfToEven) {
  // Group 0: codes times 1/2 plus four ties; the other groups the same codes times 1, so group 0's
  // 6-bit scale is -16 for any of its scales within 1/64 of 1/2, and D settles at once.
  std::vector<float> x(256);
  const int codes[] = {-4, 3, 1, -1, 2, -3, 0, 2, 1, -2, 3, -1};
  for (int i = 0; i < 256; ++i) {
    x[i] = (i < 16 ? 0.5f : 1.0f) * static_cast<float>(codes[i % 16 % 12]);
  }
  const std::vector<int> at = {12, 13, 14, 15};
  const std::vector<float> t = {2.5f, 0.5f, -0.5f, -2.5f};
  float big_d = 0;
  const auto y = EncodeWithTies<BlockQ3_K>(
      TensorType::kQ3_K, x, at, t,
      [](const BlockQ3_K& b) {
        int8_t sc[16];
        UnpackScalesQ3K(b.scales, sc);
        return Fp16ToFp32(b.d) * sc[0];
      },
      &big_d);
  ASSERT_EQ(y.size(), 256u);
  ASSERT_NE(big_d, 0.0f);
  const float want[] = {2, 0, 0, -2};  // roundf would give 3, 1, -1, -3
  for (size_t i = 0; i < at.size(); ++i) EXPECT_EQ(y[at[i]], want[i] * big_d) << t[i];
}

TEST(QuantizeTest, Q2_KRequantizesHalfToEven) {
  // Group 0 is non-negative, so its min is 0 and the code is nearest_int(x / D) directly.
  std::vector<float> x(256);
  const int codes[] = {0, 3, 1, 2, 3, 0, 2, 1, 1, 3, 0, 2};
  for (int i = 0; i < 256; ++i) {
    x[i] = 0.25f * static_cast<float>(codes[i % 16 % 12]) - (i < 16 ? 0.0f : 0.1f);
  }
  const std::vector<int> at = {12, 13, 14};
  const std::vector<float> t = {0.5f, 1.5f, 2.5f};
  float big_d = 0;
  const auto y = EncodeWithTies<BlockQ2_K>(
      TensorType::kQ2_K, x, at, t,
      [](const BlockQ2_K& b) {
        EXPECT_EQ(b.scales[0] >> 4, 0);  // group 0's min is 0
        return Fp16ToFp32(b.d) * (b.scales[0] & 0xF);
      },
      &big_d);
  ASSERT_EQ(y.size(), 256u);
  ASSERT_NE(big_d, 0.0f);
  const float want[] = {0, 2, 2};  // roundf would give 1, 2, 3
  for (size_t i = 0; i < at.size(); ++i) EXPECT_EQ(y[at[i]], want[i] * big_d) << t[i];
}

}  // namespace
}  // namespace tandem
