// PNG decoding: every colour type and bit depth against the samples the test wrote, and every
// way a PNG can be refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "media/image_decode.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::EncodePng;
using testing_media::EncodePngRgb;
using testing_media::ExpectError;
using testing_media::MakeTestPicture;
using testing_media::PngSpec;

uint32_t Crc32(const uint8_t* data, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
  }
  return ~crc;
}

void Put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<uint8_t>(v >> s));
}

void PutChunk(std::vector<uint8_t>& out, const std::string& type,
              const std::vector<uint8_t>& data) {
  Put32(out, static_cast<uint32_t>(data.size()));
  const size_t type_at = out.size();
  for (char c : type) out.push_back(static_cast<uint8_t>(c));
  out.insert(out.end(), data.begin(), data.end());
  Put32(out, Crc32(out.data() + type_at, out.size() - type_at));
}

// A well-formed PNG header (signature, IHDR with a valid CRC) claiming the given size, then one
// small IDAT (a zlib stream of one zero byte): what libpng reads before the pixels is all
// there, and decoding the pixels would fail for want of data.
std::vector<uint8_t> PngHeaderOnly(uint32_t width, uint32_t height) {
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  Put32(ihdr, width);
  Put32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // 8-bit RGB, deflate, adaptive filter, progressive
  PutChunk(out, "IHDR", ihdr);
  PutChunk(out, "IDAT", {0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01});
  return out;
}

RgbImage Decode(const std::vector<uint8_t>& bytes) {
  return DecodeImage(bytes, ImageLimits{});
}

// The picture turned by `orientation`, where stored pixel (x, y) lands: the EXIF
// specification's eight cases written as coordinate maps (independent of the decoder's code).
RgbImage Upright(const RgbImage& in, int orientation) {
  const int w = in.width, h = in.height;
  const bool swap = orientation >= 5;
  RgbImage out;
  out.width = swap ? h : w;
  out.height = swap ? w : h;
  out.rgb.resize(in.rgb.size());
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      int ox = x, oy = y;
      switch (orientation) {
        case 2:
          ox = w - 1 - x;
          break;
        case 3:
          ox = w - 1 - x;
          oy = h - 1 - y;
          break;
        case 4:
          oy = h - 1 - y;
          break;
        case 5:
          ox = y;
          oy = x;
          break;
        case 6:
          ox = h - 1 - y;
          oy = x;
          break;
        case 7:
          ox = h - 1 - y;
          oy = w - 1 - x;
          break;
        case 8:
          ox = y;
          oy = w - 1 - x;
          break;
        default:
          break;
      }
      for (int c = 0; c < 3; ++c) {
        out.rgb[(static_cast<size_t>(oy) * out.width + ox) * 3 + c] =
            in.rgb[(static_cast<size_t>(y) * w + x) * 3 + c];
      }
    }
  }
  return out;
}

TEST(DecodePng, AnExifChunkBeforeTheDataTurnsThePicture) {
  RgbImage picture = MakeTestPicture(13, 7, 3);
  for (int orientation = 1; orientation <= 8; ++orientation) {
    const std::vector<uint8_t> exif =
        testing_media::MakeExifOrientation(orientation, orientation % 2 == 0);
    PngSpec spec{13, 7,     2,
                 8,  false, {picture.rgb.begin(), picture.rgb.end()},
                 {}, {},    {exif.begin() + 6, exif.end()}};
    RgbImage decoded = Decode(EncodePng(spec));
    const RgbImage want = Upright(picture, orientation);
    EXPECT_EQ(decoded.width, want.width) << orientation;
    EXPECT_EQ(decoded.rgb, want.rgb) << orientation;
  }
  // An eXIf chunk libexif cannot read turns nothing.
  PngSpec broken{13, 7,     2,
                 8,  false, {picture.rgb.begin(), picture.rgb.end()},
                 {}, {},    {'M', 'M', 0, 42, 0xff, 0xff, 0xff, 0xff}};
  EXPECT_EQ(Decode(EncodePng(broken)).rgb, picture.rgb);
}

TEST(DecodePng, Rgb8IsExact) {
  RgbImage picture = MakeTestPicture(37, 23, 1);
  RgbImage decoded = Decode(EncodePngRgb(picture));
  EXPECT_EQ(decoded.width, 37);
  EXPECT_EQ(decoded.height, 23);
  EXPECT_EQ(decoded.rgb, picture.rgb);
}

TEST(DecodePng, InterlacedIsExact) {
  RgbImage picture = MakeTestPicture(19, 11, 2);
  PngSpec spec{19, 11, 2, 8, true, {picture.rgb.begin(), picture.rgb.end()}, {}, {}};
  EXPECT_EQ(Decode(EncodePng(spec)).rgb, picture.rgb);
}

TEST(DecodePng, AlphaIsDroppedNotComposited) {
  // Colour samples under alpha 0, 1 and 255 come out as stored.
  PngSpec spec{3, 1, 6, 8, false, {10, 20, 30, 0, 200, 100, 50, 1, 7, 8, 9, 255}, {}, {}};
  EXPECT_EQ(Decode(EncodePng(spec)).rgb, (std::vector<uint8_t>{10, 20, 30, 200, 100, 50, 7, 8, 9}));
}

TEST(DecodePng, SixteenBitKeepsTheHighByte) {
  PngSpec spec{2, 1, 2, 16, false, {0x1234, 0xabff, 0x00ff, 0xff00, 0x8080, 0x7fff}, {}, {}};
  EXPECT_EQ(Decode(EncodePng(spec)).rgb,
            (std::vector<uint8_t>{0x12, 0xab, 0x00, 0xff, 0x80, 0x7f}));
  PngSpec rgba{1, 1, 6, 16, false, {0x0102, 0x0304, 0x0506, 0x0000}, {}, {}};
  EXPECT_EQ(Decode(EncodePng(rgba)).rgb, (std::vector<uint8_t>{1, 3, 5}));
}

TEST(DecodePng, GrayscaleOfEveryDepthIsScaledAndReplicated) {
  struct Case {
    int depth;
    std::vector<uint16_t> samples;
    std::vector<uint8_t> gray;
  };
  for (const Case& c :
       {Case{1, {0, 1, 1, 0}, {0, 255, 255, 0}}, Case{2, {0, 1, 2, 3}, {0, 85, 170, 255}},
        Case{4, {0, 1, 8, 15}, {0, 17, 136, 255}}, Case{8, {0, 1, 128, 255}, {0, 1, 128, 255}},
        Case{16, {0x0000, 0x01ff, 0x8000, 0xffff}, {0, 1, 128, 255}}}) {
    PngSpec spec{4, 1, 0, c.depth, false, c.samples, {}, {}};
    std::vector<uint8_t> want;
    for (uint8_t g : c.gray) want.insert(want.end(), {g, g, g});
    EXPECT_EQ(Decode(EncodePng(spec)).rgb, want) << "bit depth " << c.depth;
  }
  PngSpec gray_alpha{2, 1, 4, 8, false, {40, 0, 200, 128}, {}, {}};
  EXPECT_EQ(Decode(EncodePng(gray_alpha)).rgb, (std::vector<uint8_t>{40, 40, 40, 200, 200, 200}));
}

TEST(DecodePng, PaletteIsLookedUpAndTransparencyIgnored) {
  const std::vector<uint8_t> palette = {255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 8, 7};
  for (int depth : {2, 4, 8}) {
    PngSpec spec{4, 1, 3, depth, false, {3, 0, 2, 1}, palette, {}};
    const std::vector<uint8_t> want = {9, 8, 7, 255, 0, 0, 0, 0, 255, 0, 255, 0};
    EXPECT_EQ(Decode(EncodePng(spec)).rgb, want) << "bit depth " << depth;
    spec.trns = {0, 128, 255, 0};  // a tRNS chunk changes nothing
    EXPECT_EQ(Decode(EncodePng(spec)).rgb, want) << "bit depth " << depth << " with tRNS";
  }
}

TEST(DecodePng, TruncatedFileIsCorrupt) {
  std::vector<uint8_t> bytes = EncodePngRgb(MakeTestPicture(64, 64, 3));
  for (size_t keep : {size_t{8}, size_t{20}, size_t{33}, bytes.size() / 2, bytes.size() - 20}) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + keep);
    ExpectError([&] { Decode(cut); }, ErrorKind::kCorrupt, "truncated PNG image");
  }
}

TEST(DecodePng, CorruptBytesAreCorrupt) {
  std::vector<uint8_t> bytes = EncodePngRgb(MakeTestPicture(64, 64, 4));
  std::vector<uint8_t> bad_ihdr_crc = bytes;
  bad_ihdr_crc[29] ^= 0xff;  // the IHDR CRC
  ExpectError([&] { Decode(bad_ihdr_crc); }, ErrorKind::kCorrupt, "corrupt PNG image: ");
  // The zlib stream of the first IDAT (8 signature + 25 IHDR + 8 IDAT length and type).
  std::vector<uint8_t> bad_zlib = bytes;
  bad_zlib[41] = 0xff;
  bad_zlib[42] = 0xff;
  ExpectError([&] { Decode(bad_zlib); }, ErrorKind::kCorrupt, "corrupt PNG image: ");
}

TEST(DecodePng, ZeroSizeIsRefused) {
  // libpng refuses a zero side in IHDR itself.
  ExpectError([] { Decode(PngHeaderOnly(0, 10)); }, ErrorKind::kCorrupt, "corrupt PNG image: ");
  ExpectError([] { Decode(PngHeaderOnly(10, 0)); }, ErrorKind::kCorrupt, "corrupt PNG image: ");
}

TEST(DecodePng, OverLimitHeaderIsRefusedBeforeDecoding) {
  // Within the limits the same kind of file gets as far as the pixels and fails there.
  ExpectError([] { Decode(PngHeaderOnly(100, 100)); }, ErrorKind::kCorrupt, "PNG image");
  // Reaching the pixels would report corrupt or truncated data, not the limit; the pixel
  // buffer (100000^2 * 3 bytes) is never asked for.
  ExpectError([] { Decode(PngHeaderOnly(100000, 100000)); }, ErrorKind::kInvalidArgument,
              "PNG image of 100000x100000 pixels: a side is over the limit of 16384");
  ExpectError([] { Decode(PngHeaderOnly(10000, 10000)); }, ErrorKind::kInvalidArgument,
              "PNG image of 10000x10000 pixels: over the limit of 50000000 pixels");
  ImageLimits small;
  small.max_side = 32;
  std::vector<uint8_t> bytes = EncodePngRgb(MakeTestPicture(33, 8, 5));
  ExpectError([&] { DecodeImage(bytes, small); }, ErrorKind::kInvalidArgument,
              "33x8 pixels: a side is over the limit of 32");
  small.max_side = 64;
  small.max_pixels = 263;
  ExpectError([&] { DecodeImage(bytes, small); }, ErrorKind::kInvalidArgument,
              "over the limit of 263 pixels");
  small.max_pixels = 264;
  EXPECT_EQ(DecodeImage(bytes, small).width, 33);
  small.max_bytes = bytes.size() - 1;
  ExpectError([&] { DecodeImage(bytes, small); }, ErrorKind::kInvalidArgument,
              "bytes is over the limit of " + std::to_string(bytes.size() - 1) + " bytes");
}

}  // namespace
}  // namespace tandem
