// Target sizes against values worked by hand from the two rules (docs/media.md).
#include "media/vision_target_size.h"

#include <gtest/gtest.h>

#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::ExpectError;

ImageSize Budget(int w, int h, int tokens) {
  return BudgetTargetSize(w, h, tokens);
}
ImageSize Llama(int w, int h, int lo = 40, int hi = 280) {
  return LlamaCppTargetSize(w, h, lo, hi);
}

TEST(BudgetTargetSize, SizesThatFillTheirBudgetAreKept) {
  // 336x480 = 161280 px = 70 * 2304: f = 1 at budget 70; f = 2 at 280.
  EXPECT_EQ(Budget(336, 480, 70), (ImageSize{336, 480}));
  EXPECT_EQ(Budget(336, 480, 280), (ImageSize{672, 960}));
  EXPECT_EQ(Budget(672, 960, 280), (ImageSize{672, 960}));
  EXPECT_EQ(Budget(960, 672, 280), (ImageSize{960, 672}));
  // f = 1/2 at budget 70; at 140 f = sqrt(1/2): 678.8 -> 672 and 475.2 -> 432.
  EXPECT_EQ(Budget(672, 960, 70), (ImageSize{336, 480}));
  EXPECT_EQ(Budget(672, 960, 140), (ImageSize{432, 672}));
}

TEST(BudgetTargetSize, OddSizes) {
  // 500x375: f = sqrt(645120 / 187500) = 1.85490; 927.45 -> 912, 695.59 -> 672 (266 tokens).
  EXPECT_EQ(Budget(500, 375, 280), (ImageSize{912, 672}));
  // budget 70: f = sqrt(161280 / 187500) = 0.92745; 463.7 -> 432, 347.8 -> 336.
  EXPECT_EQ(Budget(500, 375, 70), (ImageSize{432, 336}));
  // 4000x3000 shrinks to the same as 500x375's budget-280 size.
  EXPECT_EQ(Budget(4000, 3000, 280), (ImageSize{912, 672}));
}

TEST(BudgetTargetSize, ThinPicturesFallBackToOneUnit) {
  // 1x1000: f = sqrt(645.12) = 25.40; width 25.4 -> 0, so width = 48 and height =
  // min(floor(1000 / 1) * 48, 280 * 48) = 13440.
  EXPECT_EQ(Budget(1, 1000, 280), (ImageSize{48, 13440}));
  EXPECT_EQ(Budget(1000, 1, 280), (ImageSize{13440, 48}));
  EXPECT_EQ(Budget(1, 1000, 70), (ImageSize{48, 3360}));
  // 1x1000 at 1120: f = 50.80, width 50.8 -> 48 on its own, height 50798 -> 50784.
  EXPECT_EQ(Budget(1, 1000, 1120), (ImageSize{48, 50784}));
  // 5x100 at 70: f = sqrt(322.56) = 17.96; width 89.8 -> 48, height 1796 -> 1776 (37 tokens).
  EXPECT_EQ(Budget(5, 100, 70), (ImageSize{48, 1776}));
}

TEST(BudgetTargetSize, TinyPicturesAreScaledUp) {
  // 1x1: f = sqrt(645120) = 803.2 -> 768 (256 tokens); at 70 sqrt(161280) = 401.6 -> 384.
  EXPECT_EQ(Budget(1, 1, 280), (ImageSize{768, 768}));
  EXPECT_EQ(Budget(1, 1, 70), (ImageSize{384, 384}));
  EXPECT_EQ(Budget(48, 48, 280), (ImageSize{768, 768}));
  // 2x3: f = sqrt(107520) = 327.9; 655.8 -> 624, 983.7 -> 960.
  EXPECT_EQ(Budget(2, 3, 280), (ImageSize{624, 960}));
}

TEST(BudgetTargetSize, NeverExceedsTheBudget) {
  for (int budget : {70, 140, 280, 560, 1120}) {
    for (int w = 1; w < 3000; w += 37) {
      for (int h = 1; h < 3000; h += 53) {
        ImageSize s = Budget(w, h, budget);
        ASSERT_EQ(s.width % 48, 0);
        ASSERT_EQ(s.height % 48, 0);
        ASSERT_GT(s.width, 0);
        ASSERT_GT(s.height, 0);
        ASSERT_LE((s.width / 48) * (s.height / 48), budget) << w << "x" << h;
      }
    }
  }
}

TEST(BudgetTargetSize, RefusesBadArguments) {
  ExpectError([] { Budget(0, 10, 280); }, ErrorKind::kInvalidArgument, "side of zero");
  ExpectError([] { Budget(10, 10, 0); }, ErrorKind::kInvalidArgument, "not positive");
  // Another unit: patch 16, pooling 4 (64 px); budget 1 on 1x1 gives f = 64, one 64x64 block.
  EXPECT_EQ(BudgetTargetSize(1, 1, 1, 16, 4), (ImageSize{64, 64}));
}

TEST(LlamaCppTargetSize, NativeSizesWithinTheLimitsAreRoundedTo48) {
  EXPECT_EQ(Llama(336, 480), (ImageSize{336, 480}));  // 70 tokens
  EXPECT_EQ(Llama(672, 960), (ImageSize{672, 960}));  // 280 tokens exactly
  // 500/48 = 10.42 -> 10, 375/48 = 7.81 -> 8: 480x384, 80 tokens.
  EXPECT_EQ(Llama(500, 375), (ImageSize{480, 384}));
  // 640/48 = 13.33 -> 13, 480/48 = 10: 624x480, 130 tokens.
  EXPECT_EQ(Llama(640, 480), (ImageSize{624, 480}));
  // 800/48 = 16.67 -> 17, 1000/48 = 20.83 -> 21: 816x1008, 357 tokens, over 280: beta =
  // sqrt(800000 / 645120) = 1.11359; 800 / beta / 48 = 14.97 -> 14, 1000 / beta / 48 = 18.71
  // -> 18: 672x864.
  EXPECT_EQ(Llama(800, 1000), (ImageSize{672, 864}));
  // 700x480: 14.58 -> 15, 10: 720x480 (150 tokens).
  EXPECT_EQ(Llama(700, 480), (ImageSize{720, 480}));
  EXPECT_EQ(Llama(480, 700), (ImageSize{480, 720}));
}

TEST(LlamaCppTargetSize, LargePicturesAreScaledDownToMaxTokens) {
  // 4000x3000: beta = sqrt(12e6 / 645120) = 4.3129; 927.4 -> 912, 695.6 -> 672 (266 tokens).
  EXPECT_EQ(Llama(4000, 3000), (ImageSize{912, 672}));
  // 672x960 with at most 70 tokens: beta = 2; 336x480.
  EXPECT_EQ(Llama(672, 960, 1, 70), (ImageSize{336, 480}));
}

TEST(LlamaCppTargetSize, SmallPicturesAreScaledUpToMinTokens) {
  // 1x1: 48x48 (1 token) < 40 tokens; beta = sqrt(92160) = 303.58; ceil(6.32) = 7: 336x336.
  EXPECT_EQ(Llama(1, 1), (ImageSize{336, 336}));
  EXPECT_EQ(Llama(10, 10), (ImageSize{336, 336}));
  // 1x1000: 48x1008 = 21 tokens < 40; beta = sqrt(92.16) = 9.6; height 1000 * 9.6 / 48 = 200
  // (exactly, in doubles) -> 9600; width ceil(0.2) -> 48. 200 tokens.
  EXPECT_EQ(Llama(1, 1000), (ImageSize{48, 9600}));
  // 2x3: 48x48 -> beta = sqrt(92160 / 6) = 123.9; ceil(5.16) = 6 -> 288, ceil(7.74) = 8 -> 384.
  EXPECT_EQ(Llama(2, 3), (ImageSize{288, 384}));
}

TEST(LlamaCppTargetSize, NeverExceedsMaxTokens) {
  // 1x20000 at most 280: the documented rule gives 48x113568 (2366 tokens); cut to 48x13440.
  EXPECT_EQ(Llama(1, 20000), (ImageSize{48, 13440}));
  EXPECT_EQ(Llama(20000, 1), (ImageSize{13440, 48}));
  // min = max = 50 on 500x375: 480x384 = 80 tokens > 50, beta = sqrt(187500 / 115200) =
  // 1.2758; 293.9 -> 288 (6), 391.9 -> 384 (8): 48 tokens, under min: kept (max wins only
  // when over).
  EXPECT_EQ(Llama(500, 375, 50, 50), (ImageSize{384, 288}));
  for (int w = 1; w < 3000; w += 41) {
    for (int h = 1; h < 3000; h += 59) {
      for (auto [lo, hi] : {std::pair{40, 280}, std::pair{1, 70}, std::pair{100, 100}}) {
        ImageSize s = Llama(w, h, lo, hi);
        ASSERT_EQ(s.width % 48, 0);
        ASSERT_EQ(s.height % 48, 0);
        ASSERT_LE((s.width / 48) * (s.height / 48), hi) << w << "x" << h << " " << lo;
      }
    }
  }
}

TEST(LlamaCppTargetSize, RefusesBadLimits) {
  ExpectError([] { Llama(10, 10, 0, 10); }, ErrorKind::kInvalidArgument, "need 1 <= min <= max");
  ExpectError([] { Llama(10, 10, 50, 40); }, ErrorKind::kInvalidArgument, "need 1 <= min <= max");
  ExpectError([] { Llama(10, -1); }, ErrorKind::kInvalidArgument, "side of zero");
}

}  // namespace
}  // namespace tandem
