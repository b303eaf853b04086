// JPEG decoding: colour spaces, progressive files, EXIF orientation, and refusals.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "media/exif_orientation.h"
#include "media/image_decode.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::EncodeJpeg;
using testing_media::EncodeJpegRgb;
using testing_media::ExpectError;
using testing_media::JpegSpec;
using testing_media::MakeExifOrientation;
using testing_media::MaxAbsDiff;

// Smooth gradients: what JPEG keeps well, so the decoded picture is close to the source.
RgbImage SmoothPicture(int width, int height) {
  RgbImage image;
  image.width = width;
  image.height = height;
  image.rgb.resize(size_t(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      uint8_t* p = image.Pixel(x, y);
      p[0] = static_cast<uint8_t>(40 + x * 150 / width);
      p[1] = static_cast<uint8_t>(200 - y * 150 / height);
      p[2] = static_cast<uint8_t>(60 + (x + y) * 100 / (width + height));
    }
  }
  return image;
}

RgbImage Decode(const std::vector<uint8_t>& bytes) {
  return DecodeImage(bytes, ImageLimits{});
}

TEST(DecodeJpeg, RgbIsCloseToTheSource) {
  RgbImage picture = SmoothPicture(61, 35);
  for (int quality : {90, 100}) {
    RgbImage decoded = Decode(EncodeJpegRgb(picture, quality));
    EXPECT_EQ(decoded.width, 61);
    EXPECT_EQ(decoded.height, 35);
    EXPECT_LE(MaxAbsDiff(decoded, picture), 6) << "quality " << quality;
  }
}

TEST(DecodeJpeg, ProgressiveIsCloseToTheSource) {
  RgbImage picture = SmoothPicture(40, 24);
  JpegSpec spec{40, 24, 3, picture.rgb, 95, true, false, {}};
  EXPECT_LE(MaxAbsDiff(Decode(EncodeJpeg(spec)), picture), 6);
}

TEST(DecodeJpeg, GrayscaleIsReplicated) {
  std::vector<uint8_t> gray(32 * 16);
  for (size_t i = 0; i < gray.size(); ++i) gray[i] = static_cast<uint8_t>(50 + (i % 32) * 4);
  RgbImage decoded = Decode(EncodeJpeg(JpegSpec{32, 16, 1, gray, 100, false, false, {}}));
  ASSERT_EQ(decoded.rgb.size(), gray.size() * 3);
  int worst = 0;
  for (size_t i = 0; i < gray.size(); ++i) {
    EXPECT_EQ(decoded.rgb[i * 3], decoded.rgb[i * 3 + 1]);
    EXPECT_EQ(decoded.rgb[i * 3], decoded.rgb[i * 3 + 2]);
    worst = std::max(worst, std::abs(decoded.rgb[i * 3] - gray[i]));
  }
  EXPECT_LE(worst, 2);
}

TEST(DecodeJpeg, CmykIsTakenAsAdobeInverted) {
  // Stored values as Adobe writes them (255 = no ink). Flat areas survive JPEG almost exactly.
  struct Patch {
    uint8_t c, m, y, k;
    uint8_t r, g, b;  // round(stored * stored_k / 255)
  };
  for (const Patch& p : {Patch{255, 255, 255, 255, 255, 255, 255}, Patch{255, 0, 0, 255, 255, 0, 0},
                         Patch{200, 100, 50, 128, 100, 50, 25}}) {
    std::vector<uint8_t> samples;
    for (int i = 0; i < 16 * 16; ++i) samples.insert(samples.end(), {p.c, p.m, p.y, p.k});
    RgbImage decoded = Decode(EncodeJpeg(JpegSpec{16, 16, 4, samples, 100, false, false, {}}));
    const uint8_t* px = decoded.Pixel(8, 8);
    EXPECT_NEAR(px[0], p.r, 2);
    EXPECT_NEAR(px[1], p.g, 2);
    EXPECT_NEAR(px[2], p.b, 2);
  }
}

// A 64x32 picture whose quadrants are red (top left), green (top right), blue (bottom left)
// and white (bottom right).
enum Quadrant { kRed, kGreen, kBlue, kWhite };
RgbImage QuadrantPicture() {
  RgbImage image;
  image.width = 64;
  image.height = 32;
  image.rgb.resize(64 * 32 * 3);
  const uint8_t colors[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};
  for (int y = 0; y < 32; ++y) {
    for (int x = 0; x < 64; ++x) {
      const uint8_t* c = colors[(y >= 16 ? 2 : 0) + (x >= 32 ? 1 : 0)];
      std::copy_n(c, 3, image.Pixel(x, y));
    }
  }
  return image;
}

Quadrant ClosestColor(const uint8_t* p) {
  const int colors[4][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {255, 255, 255}};
  int best = 0;
  int best_distance = 1 << 30;
  for (int i = 0; i < 4; ++i) {
    int d = 0;
    for (int c = 0; c < 3; ++c) d += (p[c] - colors[i][c]) * (p[c] - colors[i][c]);
    if (d < best_distance) {
      best_distance = d;
      best = i;
    }
  }
  EXPECT_LT(best_distance, 3 * 40 * 40) << "a quadrant's colour is far from all four";
  return static_cast<Quadrant>(best);
}

TEST(DecodeJpeg, AppliesEveryExifOrientation) {
  // Where the stored quadrants land in the upright picture (top left, top right, bottom left,
  // bottom right), from the EXIF specification's wording: e.g. 6 "the 0th row is the visual
  // right-hand side, the 0th column the visual top", 8 "the 0th row is the visual left-hand
  // side, the 0th column the visual bottom".
  const Quadrant upright[9][4] = {
      {},
      {kRed, kGreen, kBlue, kWhite},  // 1 as stored
      {kGreen, kRed, kWhite, kBlue},  // 2 mirrored left-right
      {kWhite, kBlue, kGreen, kRed},  // 3 rotated 180
      {kBlue, kWhite, kRed, kGreen},  // 4 mirrored top-bottom
      {kRed, kBlue, kGreen, kWhite},  // 5 transposed
      {kBlue, kRed, kWhite, kGreen},  // 6 needs 90 clockwise
      {kWhite, kGreen, kBlue, kRed},  // 7 transversed
      {kGreen, kWhite, kRed, kBlue},  // 8 needs 90 counter-clockwise
  };
  RgbImage picture = QuadrantPicture();
  for (bool big_endian : {false, true}) {
    for (int orientation = 1; orientation <= 8; ++orientation) {
      JpegSpec spec{64, 32,    3,     picture.rgb,
                    95, false, false, MakeExifOrientation(orientation, big_endian)};
      RgbImage decoded = Decode(EncodeJpeg(spec));
      const bool swapped = orientation >= 5;
      ASSERT_EQ(decoded.width, swapped ? 32 : 64) << orientation;
      ASSERT_EQ(decoded.height, swapped ? 64 : 32) << orientation;
      const int w = decoded.width;
      const int h = decoded.height;
      const Quadrant got[4] = {ClosestColor(decoded.Pixel(w / 4, h / 4)),
                               ClosestColor(decoded.Pixel(3 * w / 4, h / 4)),
                               ClosestColor(decoded.Pixel(w / 4, 3 * h / 4)),
                               ClosestColor(decoded.Pixel(3 * w / 4, 3 * h / 4))};
      for (int q = 0; q < 4; ++q) {
        EXPECT_EQ(got[q], upright[orientation][q])
            << "orientation " << orientation << (big_endian ? " (MM)" : " (II)") << " quadrant "
            << q;
      }
    }
  }
}

TEST(DecodeJpeg, UnusableOrientationValuesTurnNothing) {
  RgbImage picture = QuadrantPicture();
  RgbImage plain = Decode(EncodeJpegRgb(picture));
  for (int value : {0, 9, 300}) {
    JpegSpec spec{64, 32, 3, picture.rgb, 95, false, false, MakeExifOrientation(value, false)};
    EXPECT_EQ(Decode(EncodeJpeg(spec)).rgb, plain.rgb) << value;
  }
  JpegSpec as_long{64, 32, 3, picture.rgb, 95, false, false, MakeExifOrientation(6, true, 4)};
  EXPECT_EQ(Decode(EncodeJpeg(as_long)).rgb, plain.rgb) << "a LONG orientation is not read";
  std::vector<uint8_t> garbage = {'E', 'x', 'i', 'f', 0, 0, 'X', 'X', 1, 2, 3};
  JpegSpec broken{64, 32, 3, picture.rgb, 95, false, false, garbage};
  EXPECT_EQ(Decode(EncodeJpeg(broken)).rgb, plain.rgb) << "unreadable EXIF";
}

TEST(ExifOrientation, ReadsTheTagInBothByteOrders) {
  for (int value = 1; value <= 8; ++value) {
    EXPECT_EQ(ReadExifOrientation(MakeExifOrientation(value, false)), value);
    EXPECT_EQ(ReadExifOrientation(MakeExifOrientation(value, true)), value);
  }
  EXPECT_EQ(ReadExifOrientation({}), 1);
}

TEST(DecodeJpeg, TruncatedFileIsCorrupt) {
  std::vector<uint8_t> bytes = EncodeJpegRgb(SmoothPicture(64, 64));
  for (size_t keep : {size_t{3}, size_t{100}, bytes.size() / 2, bytes.size() - 10}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
    ExpectError([&] { Decode(cut); }, ErrorKind::kCorrupt, "truncated JPEG image");
  }
}

TEST(DecodeJpeg, CorruptBytesAreCorrupt) {
  std::vector<uint8_t> bytes = EncodeJpegRgb(SmoothPicture(64, 64));
  // The second marker is APP0 (JFIF) at offset 2; make it an SOF with garbage.
  std::vector<uint8_t> bad_marker = bytes;
  bad_marker[3] = 0xc0;
  bad_marker[6] = 0xff;
  ExpectError([&] { Decode(bad_marker); }, ErrorKind::kCorrupt, "corrupt JPEG image: ");
  // A scan before any frame header.
  std::vector<uint8_t> sos_first = {0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 0x01,
                                    0x01, 0x00, 0x00, 0x3f, 0x00, 0x00, 0x00};
  ExpectError([&] { Decode(sos_first); }, ErrorKind::kCorrupt,
              "corrupt JPEG image: Invalid JPEG file structure: SOS before SOF");
  // Bytes that are no marker run into the end of the data.
  std::vector<uint8_t> not_a_marker = {0xff, 0xd8, 0xff, 0x00, 0x12, 0x34};
  ExpectError([&] { Decode(not_a_marker); }, ErrorKind::kCorrupt, "truncated JPEG image");
  // Entropy-coded data replaced by bytes that are no Huffman code.
  std::vector<uint8_t> bad_data = bytes;
  for (size_t i = bytes.size() - 200; i < bytes.size() - 2; ++i) bad_data[i] = 0xff;
  ExpectError([&] { Decode(bad_data); }, ErrorKind::kCorrupt, "JPEG image");
}

TEST(DecodeJpeg, TooManyScansAreRefused) {
  std::vector<uint8_t> gray(16 * 16, 100);
  std::vector<uint8_t> bytes = EncodeJpeg(JpegSpec{16, 16, 1, gray, 90, false, true, {}});
  ExpectError([&] { Decode(bytes); }, ErrorKind::kCorrupt, "more than 500 scans");
}

TEST(DecodeJpeg, OverLimitIsRefusedBeforeDecoding) {
  std::vector<uint8_t> bytes = EncodeJpegRgb(SmoothPicture(40, 30));
  ImageLimits limits;
  limits.max_pixels = 1199;
  ExpectError([&] { DecodeImage(bytes, limits); }, ErrorKind::kInvalidArgument,
              "JPEG image of 40x30 pixels: over the limit of 1199 pixels");
  // A header claiming 60000x60000 in front of a tiny scan: refused by size, not by truncation.
  std::vector<uint8_t> huge = bytes;
  for (size_t i = 2; i + 9 < huge.size(); ++i) {
    if (huge[i] == 0xff && huge[i + 1] == 0xc0) {  // SOF0: length, precision, height, width
      huge[i + 5] = 0xea;
      huge[i + 6] = 0x60;
      huge[i + 7] = 0xea;
      huge[i + 8] = 0x60;
      break;
    }
  }
  ExpectError([&] { Decode(huge); }, ErrorKind::kInvalidArgument,
              "JPEG image of 60000x60000 pixels: a side is over the limit");
}

}  // namespace
}  // namespace tandem
