// Pillow (Debian's python3-pil, run by /usr/bin/python3) as the independent truth for the
// resize transformers does with PIL and for what Image.open + exif_transpose + convert("RGB")
// decode. Skipped, saying so, when Pillow is not installed.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "media/image_decode.h"
#include "media/image_resize.h"
#include "media/media_test_util.h"
#include "media/vision_target_size.h"

namespace tandem {
namespace {

using namespace testing_media;

constexpr const char* kPython = "/usr/bin/python3";

// resize IN W H TW TH OUT: raw RGB in, raw RGB out.
// decode IN OUT: any image file in; "W H\n" and raw RGB out.
constexpr const char* kScript = R"(import sys
from PIL import Image, ImageOps
bicubic = getattr(Image, "Resampling", Image).BICUBIC
if sys.argv[1] == "resize":
    w, h, tw, th = map(int, sys.argv[3:7])
    with open(sys.argv[2], "rb") as f:
        im = Image.frombytes("RGB", (w, h), f.read())
    out = im.resize((tw, th), bicubic)
    with open(sys.argv[7], "wb") as f:
        f.write(out.tobytes())
else:
    im = Image.open(sys.argv[2])
    im = ImageOps.exif_transpose(im).convert("RGB")
    with open(sys.argv[3], "wb") as f:
        f.write(b"%d %d\n" % im.size + im.tobytes())
)";

bool PillowAvailable() {
  static const bool available =
      std::system((std::string(kPython) + " -c 'import PIL' >/dev/null 2>&1").c_str()) == 0;
  return available;
}

std::string ScriptPath() {
  static const std::string path = [] {
    std::string p = ::testing::TempDir() + "tandem_pil_oracle.py";
    std::ofstream(p) << kScript;
    return p;
  }();
  return path;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void RunPython(const std::string& args) {
  const std::string command = std::string(kPython) + " " + ScriptPath() + " " + args;
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

RgbImage PillowResize(const RgbImage& image, int width, int height) {
  const std::string in = WriteTempFile("pil_resize_in.rgb", image.rgb);
  const std::string out = ::testing::TempDir() + "pil_resize_out.rgb";
  RunPython("resize " + in + " " + std::to_string(image.width) + " " +
            std::to_string(image.height) + " " + std::to_string(width) + " " +
            std::to_string(height) + " " + out);
  RgbImage result;
  result.width = width;
  result.height = height;
  result.rgb = ReadFile(out);
  return result;
}

RgbImage PillowDecode(const std::vector<uint8_t>& file) {
  const std::string in = WriteTempFile("pil_decode_in.img", file);
  const std::string out = ::testing::TempDir() + "pil_decode_out.bin";
  RunPython("decode " + in + " " + out);
  std::vector<uint8_t> bytes = ReadFile(out);
  RgbImage result;
  auto newline = std::find(bytes.begin(), bytes.end(), '\n');
  if (newline == bytes.end()) return result;
  std::sscanf(std::string(bytes.begin(), newline).c_str(), "%d %d", &result.width, &result.height);
  result.rgb.assign(newline + 1, bytes.end());
  return result;
}

// Counts differing samples and the largest difference, for the failure message.
std::string Difference(const RgbImage& a, const RgbImage& b) {
  if (a.rgb.size() != b.rgb.size()) return "sizes differ";
  size_t n = 0;
  for (size_t i = 0; i < a.rgb.size(); ++i) n += a.rgb[i] != b.rgb[i];
  return std::to_string(n) + " of " + std::to_string(a.rgb.size()) +
         " samples differ, by at most " + std::to_string(MaxAbsDiff(a, b));
}

#define SKIP_WITHOUT_PILLOW()                                                            \
  if (!PillowAvailable()) {                                                              \
    GTEST_SKIP() << "Pillow is not installed for /usr/bin/python3 (Debian python3-pil)"; \
  }

TEST(PillowOracle, BicubicResizeMatchesByteForByte) {
  SKIP_WITHOUT_PILLOW();
  struct Case {
    int w, h, tw, th;
  };
  std::vector<Case> cases = {
      {500, 375, 912, 672},  // the budget rule's 500x375 at 280 tokens: upscale
      {500, 375, 432, 336},  // ... at 70 tokens: downscale
      {672, 960, 336, 480},  // exactly half
      {333, 777, 200, 500},  // uneven ratios on both axes
      {100, 50, 37, 50},     // horizontal pass only
      {100, 50, 100, 171},   // vertical pass only
      {1, 1, 768, 768},      // a single pixel filling the budget
      {2, 3, 624, 960},     {1, 1000, 48, 13440},  // the thin fallback
      {1200, 900, 96, 48},                         // strong downscale: a wide kernel
  };
  for (const Case& c : cases) {
    RgbImage picture = MakeTestPicture(c.w, c.h, static_cast<uint32_t>(c.w * 31 + c.h));
    RgbImage ours = ResizeBicubicAntialiased(picture, c.tw, c.th);
    RgbImage pillow = PillowResize(picture, c.tw, c.th);
    EXPECT_TRUE(ours.rgb == pillow.rgb)
        << c.w << "x" << c.h << " -> " << c.tw << "x" << c.th << ": " << Difference(ours, pillow);
  }
  // And the targets the budget rule picks for a few shapes.
  for (auto [w, h] : {std::pair{640, 480}, std::pair{37, 23}, std::pair{300, 1200}}) {
    ImageSize target = BudgetTargetSize(w, h, 280);
    RgbImage picture = MakeTestPicture(w, h, 99);
    RgbImage ours = ResizeBicubicAntialiased(picture, target.width, target.height);
    RgbImage pillow = PillowResize(picture, target.width, target.height);
    EXPECT_TRUE(ours.rgb == pillow.rgb) << w << "x" << h << ": " << Difference(ours, pillow);
  }
}

TEST(PillowOracle, DecodingMatchesImageOpenConvertRgb) {
  SKIP_WITHOUT_PILLOW();
  RgbImage picture = MakeTestPicture(61, 45, 12);
  std::vector<uint8_t> rgba;
  for (size_t i = 0; i < picture.rgb.size(); i += 3) {
    rgba.insert(rgba.end(), {picture.rgb[i], picture.rgb[i + 1], picture.rgb[i + 2],
                             static_cast<uint8_t>(i * 7 % 256)});
  }
  std::vector<uint16_t> rgba16(rgba.begin(), rgba.end());
  for (uint16_t& v : rgba16) v = static_cast<uint16_t>(v * 257 + (v & 3));
  std::vector<uint16_t> gray4;
  for (int i = 0; i < 61 * 45; ++i) gray4.push_back(static_cast<uint16_t>(i * 5 % 16));
  std::vector<uint16_t> indices;
  for (int i = 0; i < 61 * 45; ++i) indices.push_back(static_cast<uint16_t>(i * 3 % 5));
  std::vector<uint8_t> palette = {1, 2, 3, 250, 0, 0, 0, 250, 0, 0, 0, 250, 100, 100, 100};
  std::vector<uint8_t> cmyk;
  for (size_t i = 0; i < picture.rgb.size(); i += 3) {
    cmyk.insert(cmyk.end(), {picture.rgb[i], picture.rgb[i + 1], picture.rgb[i + 2],
                             static_cast<uint8_t>(255 - i % 64)});
  }
  std::vector<uint8_t> gray8(61 * 45);
  for (size_t i = 0; i < gray8.size(); ++i) gray8[i] = picture.rgb[i * 3];

  struct File {
    std::string what;
    std::vector<uint8_t> bytes;
  };
  std::vector<File> files = {
      {"PNG RGB", EncodePngRgb(picture)},
      {"PNG RGBA", EncodePng({61, 45, 6, 8, false, {rgba.begin(), rgba.end()}, {}, {}})},
      {"PNG RGBA 16-bit interlaced", EncodePng({61, 45, 6, 16, true, rgba16, {}, {}})},
      {"PNG gray 4-bit", EncodePng({61, 45, 0, 4, false, gray4, {}, {}})},
      {"PNG palette + tRNS", EncodePng({61, 45, 3, 4, false, indices, palette, {0, 255, 7}})},
      {"JPEG q90", EncodeJpegRgb(picture, 90)},
      {"JPEG progressive", EncodeJpeg({61, 45, 3, picture.rgb, 80, true, false, {}})},
      {"JPEG gray", EncodeJpeg({61, 45, 1, gray8, 85, false, false, {}})},
      {"JPEG CMYK", EncodeJpeg({61, 45, 4, cmyk, 90, false, false, {}})},
      {"WebP lossless", EncodeWebpLossless(picture)},
      {"WebP lossless RGBA", EncodeWebpLosslessRgba(61, 45, rgba)},
      {"WebP lossy", EncodeWebpLossy(picture, 75)},
  };
  for (int orientation = 1; orientation <= 8; ++orientation) {
    files.push_back({"JPEG EXIF orientation " + std::to_string(orientation),
                     EncodeJpeg({61, 45, 3, picture.rgb, 90, false, false,
                                 MakeExifOrientation(orientation, orientation % 2 == 0)})});
  }
  // PNG's eXIf chunk holds the TIFF structure alone; WebP's EXIF chunk is written both ways.
  for (int orientation = 1; orientation <= 8; ++orientation) {
    const std::vector<uint8_t> exif = MakeExifOrientation(orientation, orientation % 3 == 0);
    const std::vector<uint8_t> tiff(exif.begin() + 6, exif.end());
    PngSpec png{61, 45, 2, 8, false, {picture.rgb.begin(), picture.rgb.end()}, {}, {}, tiff};
    const std::string o = std::to_string(orientation);
    files.push_back({"PNG eXIf orientation " + o, EncodePng(png)});
    files.push_back({"WebP EXIF orientation " + o,
                     WithWebpExif(EncodeWebpLossless(picture), orientation % 2 ? exif : tiff)});
  }
  for (const File& file : files) {
    RgbImage ours = DecodeImage(file.bytes);
    RgbImage pillow = PillowDecode(file.bytes);
    EXPECT_EQ(ours.width, pillow.width) << file.what;
    EXPECT_EQ(ours.height, pillow.height) << file.what;
    EXPECT_TRUE(ours.rgb == pillow.rgb) << file.what << ": " << Difference(ours, pillow);
  }
}

}  // namespace
}  // namespace tandem
