#include "media/vision_preprocess.h"

#include <gtest/gtest.h>

#include "media/image_resize.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::ExpectError;
using testing_media::MakeTestPicture;

TEST(PrepareImage, AnImageAtItsTargetSizeIsOnlyRescaled) {
  RgbImage picture = MakeTestPicture(672, 960, 3);
  for (ResizeRule rule : {ResizeRule::kBudget, ResizeRule::kLlamaCpp}) {
    VisionPreprocessOptions options;
    options.rule = rule;
    VisionPixels pixels = PrepareImage(picture, options);
    EXPECT_EQ(pixels.width, 672);
    EXPECT_EQ(pixels.height, 960);
    EXPECT_EQ(pixels.tokens, 280);
    ASSERT_EQ(pixels.rgb.size(), picture.rgb.size());
    for (size_t i = 0; i < picture.rgb.size(); ++i) {
      // transformers multiplies by the float32 of 1/255.
      ASSERT_EQ(pixels.rgb[i], static_cast<float>(picture.rgb[i]) * static_cast<float>(1.0 / 255))
          << i;
    }
  }
}

TEST(PrepareImage, BudgetRuleStretchesWithBicubic) {
  RgbImage picture = MakeTestPicture(500, 375, 4);
  VisionPixels pixels = PrepareImage(picture, {});
  EXPECT_EQ(pixels.width, 912);
  EXPECT_EQ(pixels.height, 672);
  EXPECT_EQ(pixels.tokens, 19 * 14);
  RgbImage resized = ResizeBicubicAntialiased(picture, 912, 672);
  for (size_t i = 0; i < resized.rgb.size(); i += 101) {
    ASSERT_EQ(pixels.rgb[i], static_cast<float>(resized.rgb[i]) * static_cast<float>(1.0 / 255));
  }
  VisionPreprocessOptions small;
  small.budget_tokens = 70;
  VisionPixels seventy = PrepareImage(picture, small);
  EXPECT_EQ(seventy.width, 432);
  EXPECT_EQ(seventy.height, 336);
  EXPECT_EQ(seventy.tokens, 63);
}

TEST(PrepareImage, LlamaCppRuleLetterboxes) {
  RgbImage picture = MakeTestPicture(500, 375, 5);
  VisionPreprocessOptions options;
  options.rule = ResizeRule::kLlamaCpp;
  VisionPixels pixels = PrepareImage(picture, options);
  EXPECT_EQ(pixels.width, 480);
  EXPECT_EQ(pixels.height, 384);
  EXPECT_EQ(pixels.tokens, 80);
  // Rows 0..11 are the black bar.
  for (int i = 0; i < 480 * 12 * 3; ++i) ASSERT_EQ(pixels.rgb[i], 0.0f);
  options.min_tokens = 100;
  options.max_tokens = 200;
  VisionPixels more = PrepareImage(picture, options);
  EXPECT_GE(more.tokens, 100);
  EXPECT_LE(more.tokens, 200);
}

TEST(PrepareImage, AppliesMeanAndStdPerChannel) {
  RgbImage picture;
  picture.width = 48;
  picture.height = 48;
  for (int i = 0; i < 48 * 48; ++i) picture.rgb.insert(picture.rgb.end(), {0, 51, 255});
  VisionPreprocessOptions options;
  options.rule = ResizeRule::kLlamaCpp;
  options.min_tokens = 1;
  options.mean = {0.5f, 0.5f, 0.5f};
  options.std = {0.5f, 0.25f, 2.0f};
  VisionPixels pixels = PrepareImage(picture, options);
  ASSERT_EQ(pixels.width, 48);
  EXPECT_FLOAT_EQ(pixels.rgb[0], -1.0f);                  // (0 - 0.5) / 0.5
  EXPECT_FLOAT_EQ(pixels.rgb[1], (0.2f - 0.5f) / 0.25f);  // 51/255 = 0.2
  EXPECT_FLOAT_EQ(pixels.rgb[2], 0.25f);                  // (1 - 0.5) / 2
}

TEST(PrepareImage, RefusesBadOptionsAndEmptyImages) {
  RgbImage picture = MakeTestPicture(10, 10, 6);
  VisionPreprocessOptions options;
  options.budget_tokens = 200;
  ExpectError([&] { PrepareImage(picture, options); }, ErrorKind::kInvalidArgument,
              "budget 200 is not one of 70, 140, 280, 560, 1120");
  options = {};
  options.std[1] = 0.0f;
  ExpectError([&] { PrepareImage(picture, options); }, ErrorKind::kInvalidArgument, "std");
  options = {};
  options.rule = ResizeRule::kLlamaCpp;
  options.min_tokens = 300;
  ExpectError([&] { PrepareImage(picture, options); }, ErrorKind::kInvalidArgument,
              "need 1 <= min <= max");
  ExpectError([&] { PrepareImage(RgbImage{}, {}); }, ErrorKind::kInvalidArgument,
              "empty or inconsistent");
}

}  // namespace
}  // namespace tandem
