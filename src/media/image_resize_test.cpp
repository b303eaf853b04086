// Both resamplers on cases small enough to work out by hand; Pillow itself is the oracle for
// the bicubic one in pil_oracle_test.cpp.
#include "media/image_resize.h"

#include <gtest/gtest.h>

#include <vector>

#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::ExpectError;
using testing_media::MakeTestPicture;

// A gray picture from one row of values, repeated `rows` times.
RgbImage GrayRows(const std::vector<uint8_t>& row, int rows) {
  RgbImage image;
  image.width = static_cast<int>(row.size());
  image.height = rows;
  image.rgb.resize(row.size() * rows * 3);
  for (size_t i = 0; i < image.rgb.size(); ++i) image.rgb[i] = row[i / 3 % row.size()];
  return image;
}

std::vector<uint8_t> FirstChannelOfRow(const RgbImage& image, int y) {
  std::vector<uint8_t> out;
  for (int x = 0; x < image.width; ++x) out.push_back(image.Pixel(x, y)[0]);
  return out;
}

TEST(ResizeBicubicAntialiased, UpscaleTwoToFourByHand) {
  // Scale 1/2, support 2. Output 1 has centre 0.75 and reads inputs 0 and 1 at distances 0.25
  // and 0.75: weights 0.8671875 and 0.2265625 (a = -0.5), normalised 0.792857 / 0.207143, so
  // 255 * 0.207143 = 52.8 -> 53. Output 0 (centre 0.25): 0.8671875 and bicubic(1.25) =
  // -0.0703125, normalised 1.0882 / -0.0882: 255 * -0.0882 < 0 -> 0. The others mirror.
  RgbImage out = ResizeBicubicAntialiased(GrayRows({0, 255}, 1), 4, 1);
  EXPECT_EQ(FirstChannelOfRow(out, 0), (std::vector<uint8_t>{0, 53, 202, 255}));
}

TEST(ResizeBicubicAntialiased, DownscaleFourToTwoWidensTheKernel) {
  // Scale 2: support 4, distances halved. Output 0 (centre 1.0) weighs inputs 0..3 by
  // bicubic(-0.25, 0.25, 0.75, 1.25) = 0.8671875, 0.8671875, 0.2265625, -0.0703125 (sum
  // 1.890625): 255 * (0.2265625 - 0.0703125) / 1.890625 = 21.07 -> 21; output 1 mirrors it,
  // 255 - 21.07 = 233.9 -> 234. Without the widening it would read only inputs 0 and 1.
  RgbImage out = ResizeBicubicAntialiased(GrayRows({0, 0, 255, 255}, 1), 2, 1);
  EXPECT_EQ(FirstChannelOfRow(out, 0), (std::vector<uint8_t>{21, 234}));
}

TEST(ResizeBicubicAntialiased, IsSeparableInBothAxes) {
  // The same four values along a column give the same result along y.
  RgbImage column;
  column.width = 1;
  column.height = 4;
  column.rgb = {0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255};
  RgbImage out = ResizeBicubicAntialiased(column, 1, 2);
  EXPECT_EQ(out.Pixel(0, 0)[1], 21);
  EXPECT_EQ(out.Pixel(0, 1)[2], 234);
}

TEST(ResizeBicubicAntialiased, SameSizeIsACopyAndFlatStaysFlat) {
  RgbImage picture = MakeTestPicture(30, 20, 1);
  EXPECT_EQ(ResizeBicubicAntialiased(picture, 30, 20).rgb, picture.rgb);
  RgbImage flat = GrayRows(std::vector<uint8_t>(17, 77), 13);
  for (auto [w, h] : {std::pair{5, 3}, std::pair{40, 90}, std::pair{17, 50}, std::pair{3, 13}}) {
    RgbImage out = ResizeBicubicAntialiased(flat, w, h);
    ASSERT_EQ(out.width, w);
    ASSERT_EQ(out.height, h);
    for (uint8_t v : out.rgb) ASSERT_EQ(v, 77) << w << "x" << h;
  }
  ExpectError([&] { ResizeBicubicAntialiased(flat, 0, 5); }, ErrorKind::kInvalidArgument,
              "not positive");
}

TEST(ResizeBilinearLetterbox, TwoByOneIntoFourByFourByHand) {
  // Scale min(4/2, 4/1) = 2: the picture becomes 4x2, corner-aligned (inputs at 0, 1/3, 2/3, 1
  // of the way: 0, 85, 170, 255), centred 1 row down on black.
  RgbImage out = ResizeBilinearLetterbox(GrayRows({0, 255}, 1), 4, 4);
  ASSERT_EQ(out.width, 4);
  ASSERT_EQ(out.height, 4);
  EXPECT_EQ(FirstChannelOfRow(out, 0), (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(FirstChannelOfRow(out, 1), (std::vector<uint8_t>{0, 85, 170, 255}));
  EXPECT_EQ(FirstChannelOfRow(out, 2), (std::vector<uint8_t>{0, 85, 170, 255}));
  EXPECT_EQ(FirstChannelOfRow(out, 3), (std::vector<uint8_t>{0, 0, 0, 0}));
}

TEST(ResizeBilinearLetterbox, InnerSizeRoundsUp) {
  // 3x2 into 4x4: scale min(4/3, 2) = 4/3, inner (4, ceil(2.67) = 3), no room to centre
  // vertically ((4 - 3) / 2 = 0). Corner-aligned: x at 0, 2/3, 4/3, 2 of the input, y at 0,
  // 1/2, 1.
  RgbImage picture;
  picture.width = 3;
  picture.height = 2;
  for (uint8_t v : {0, 90, 180, 30, 120, 210}) {
    picture.rgb.push_back(v);
    picture.rgb.push_back(v);
    picture.rgb.push_back(v);
  }
  RgbImage out = ResizeBilinearLetterbox(picture, 4, 4);
  EXPECT_EQ(FirstChannelOfRow(out, 0), (std::vector<uint8_t>{0, 60, 120, 180}));
  EXPECT_EQ(FirstChannelOfRow(out, 1), (std::vector<uint8_t>{15, 75, 135, 195}));
  EXPECT_EQ(FirstChannelOfRow(out, 2), (std::vector<uint8_t>{30, 90, 150, 210}));
  EXPECT_EQ(FirstChannelOfRow(out, 3), (std::vector<uint8_t>{0, 0, 0, 0}));
}

TEST(ResizeBilinearLetterbox, DownscaleHasNoAntialiasing) {
  // 5 -> 3 corner-aligned samples inputs 0, 2 and 4 exactly: the odd ones are skipped.
  RgbImage out = ResizeBilinearLetterbox(GrayRows({10, 200, 30, 200, 50}, 5), 3, 3);
  EXPECT_EQ(FirstChannelOfRow(out, 1), (std::vector<uint8_t>{10, 30, 50}));
}

TEST(ResizeBilinearLetterbox, BarsAreBlackAndCentred) {
  // 500x375 into 480x384: scale 0.96 -> 480x360, 12 rows of black above and below.
  RgbImage flat = GrayRows(std::vector<uint8_t>(500, 200), 375);
  RgbImage out = ResizeBilinearLetterbox(flat, 480, 384);
  for (int y = 0; y < 384; ++y) {
    const uint8_t want = (y >= 12 && y < 372) ? 200 : 0;
    for (int x = 0; x < 480; x += 7) ASSERT_EQ(out.Pixel(x, y)[0], want) << x << "," << y;
  }
  // Same size: returned as is; a picture already fitting one side is only padded.
  RgbImage picture = MakeTestPicture(6, 4, 2);
  EXPECT_EQ(ResizeBilinearLetterbox(picture, 6, 4).rgb, picture.rgb);
  RgbImage padded = ResizeBilinearLetterbox(picture, 6, 8);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      for (int c = 0; c < 3; ++c) ASSERT_EQ(padded.Pixel(x, y + 2)[c], picture.Pixel(x, y)[c]);
    }
  }
}

}  // namespace
}  // namespace tandem
