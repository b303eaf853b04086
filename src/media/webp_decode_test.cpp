// WebP decoding: lossless exact, lossy close, alpha dropped, and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "media/image_decode.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::EncodeWebpLossless;
using testing_media::EncodeWebpLosslessRgba;
using testing_media::EncodeWebpLossy;
using testing_media::ExpectError;
using testing_media::MakeTestPicture;

RgbImage Decode(const std::vector<uint8_t>& bytes) {
  return DecodeImage(bytes, ImageLimits{});
}

void PutLe(std::vector<uint8_t>& out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A RIFF WebP file holding one chunk.
std::vector<uint8_t> Riff(const std::string& fourcc, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out = {'R', 'I', 'F', 'F'};
  PutLe(out, static_cast<uint32_t>(4 + 8 + payload.size() + payload.size() % 2), 4);
  for (char c : std::string("WEBP") + fourcc) out.push_back(static_cast<uint8_t>(c));
  PutLe(out, static_cast<uint32_t>(payload.size()), 4);
  out.insert(out.end(), payload.begin(), payload.end());
  if (payload.size() % 2) out.push_back(0);
  return out;
}

TEST(DecodeWebp, AnExifChunkTurnsThePicture) {
  RgbImage picture = MakeTestPicture(13, 7, 5);
  const std::vector<uint8_t> plain = testing_media::EncodeWebpLossless(picture);
  // Orientation 6 (turn 90 degrees clockwise): stored pixel (x, y) lands at (h - 1 - y, x).
  for (bool with_header : {false, true}) {
    std::vector<uint8_t> exif = testing_media::MakeExifOrientation(6, with_header);
    if (!with_header) exif.erase(exif.begin(), exif.begin() + 6);
    RgbImage decoded = Decode(testing_media::WithWebpExif(plain, exif));
    ASSERT_EQ(decoded.width, 7);
    ASSERT_EQ(decoded.height, 13);
    for (int y = 0; y < 7; ++y) {
      for (int x = 0; x < 13; ++x) {
        const uint8_t* got = decoded.Pixel(6 - y, x);
        const uint8_t* want = picture.Pixel(x, y);
        EXPECT_TRUE(std::equal(got, got + 3, want)) << x << "," << y;
      }
    }
  }
  std::vector<uint8_t> garbage = {'I', 'I', 42, 0, 9, 9};
  EXPECT_EQ(Decode(testing_media::WithWebpExif(plain, garbage)).rgb, picture.rgb);
}

TEST(DecodeWebp, LosslessIsExact) {
  RgbImage picture = MakeTestPicture(45, 29, 7);
  RgbImage decoded = Decode(EncodeWebpLossless(picture));
  EXPECT_EQ(decoded.width, 45);
  EXPECT_EQ(decoded.height, 29);
  EXPECT_EQ(decoded.rgb, picture.rgb);
}

TEST(DecodeWebp, AlphaIsDroppedNotComposited) {
  // Colour under every alpha, including 0, as stored (the encoder keeps it: exact mode).
  std::vector<uint8_t> rgba = {10, 20, 30, 0, 200, 100, 50, 1, 7, 8, 9, 128, 1, 2, 3, 255};
  EXPECT_EQ(Decode(EncodeWebpLosslessRgba(2, 2, rgba)).rgb,
            (std::vector<uint8_t>{10, 20, 30, 200, 100, 50, 7, 8, 9, 1, 2, 3}));
}

TEST(DecodeWebp, LossyIsCloseToTheSource) {
  RgbImage flat;
  flat.width = 32;
  flat.height = 32;
  flat.rgb.assign(32 * 32 * 3, 0);
  for (size_t i = 0; i < flat.rgb.size(); i += 3) {
    flat.rgb[i] = 180;
    flat.rgb[i + 1] = 90;
    flat.rgb[i + 2] = 40;
  }
  RgbImage decoded = Decode(EncodeWebpLossy(flat, 95));
  EXPECT_EQ(decoded.width, 32);
  EXPECT_LE(testing_media::MaxAbsDiff(decoded, flat), 4);
}

TEST(DecodeWebp, TruncatedFileIsCorrupt) {
  for (const std::vector<uint8_t>& bytes : {EncodeWebpLossless(MakeTestPicture(64, 64, 8)),
                                            EncodeWebpLossy(MakeTestPicture(64, 64, 9), 80)}) {
    for (size_t keep : {size_t{12}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
      std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
      ExpectError([&] { Decode(cut); }, ErrorKind::kCorrupt, "truncated WebP image");
    }
  }
}

TEST(DecodeWebp, CorruptBytesAreCorrupt) {
  std::vector<uint8_t> bytes = EncodeWebpLossless(MakeTestPicture(64, 64, 10));
  std::vector<uint8_t> bad = bytes;
  for (size_t i = 25; i < bad.size(); ++i) bad[i] = static_cast<uint8_t>(i * 37);
  ExpectError([&] { Decode(bad); }, ErrorKind::kCorrupt, "corrupt WebP image");
  std::vector<uint8_t> unknown_chunk = Riff("ABCD", {1, 2, 3, 4});
  ExpectError([&] { Decode(unknown_chunk); }, ErrorKind::kCorrupt, "corrupt WebP image");
}

TEST(DecodeWebp, AnimationIsUnsupported) {
  // VP8X with the animation flag, canvas 2x2.
  std::vector<uint8_t> vp8x = {0x02, 0, 0, 0};
  PutLe(vp8x, 1, 3);
  PutLe(vp8x, 1, 3);
  ExpectError([&] { Decode(Riff("VP8X", vp8x)); }, ErrorKind::kUnsupported,
              "animated WebP images are not supported");
}

TEST(DecodeWebp, OverLimitHeaderIsRefusedBeforeDecoding) {
  // A VP8L header claiming 16384x16384 and no image data after it.
  std::vector<uint8_t> vp8l = {0x2f};
  const uint32_t bits = (16383u) | (16383u << 14);  // width-1, height-1, no alpha, version 0
  PutLe(vp8l, bits, 4);
  vp8l.insert(vp8l.end(), 8, 0);
  ExpectError([&] { Decode(Riff("VP8L", vp8l)); }, ErrorKind::kInvalidArgument,
              "WebP image of 16384x16384 pixels: over the limit of 50000000 pixels");
  ImageLimits limits;
  limits.max_side = 40;
  std::vector<uint8_t> bytes = EncodeWebpLossless(MakeTestPicture(41, 3, 11));
  ExpectError([&] { DecodeImage(bytes, limits); }, ErrorKind::kInvalidArgument,
              "WebP image of 41x3 pixels: a side is over the limit of 40");
}

}  // namespace
}  // namespace tandem
