#include "media/image_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::ExpectError;

std::vector<uint8_t> Bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

TEST(SniffImageFormat, KnowsTheThreeSignatures) {
  EXPECT_EQ(SniffImageFormat(Bytes(std::string("\x89PNG\r\n\x1a\n", 8) + "rest")),
            ImageFormat::kPng);
  EXPECT_EQ(SniffImageFormat(Bytes("\xff\xd8\xff\xe0")), ImageFormat::kJpeg);
  EXPECT_EQ(SniffImageFormat(Bytes(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16))), ImageFormat::kWebp);
}

TEST(SniffImageFormat, RefusesEverythingElse) {
  for (const std::string& s :
       {std::string(), std::string("GIF89a"), std::string("\x89PNG\r\n\x1a", 7),
        std::string("\xff\xd8"), std::string("RIFF\x10\0\0\0WAVE", 12), std::string("RIFF"),
        std::string("BM\0\0\0\0", 6), std::string("\x89png\r\n\x1a\n", 8)}) {
    ExpectError([&] { SniffImageFormat(Bytes(s)); }, ErrorKind::kInvalidArgument,
                "not a PNG, JPEG or WebP image");
  }
}

TEST(CheckClaimedMediaType, AcceptsMatchingTypesInAnyCaseWithParameters) {
  CheckClaimedMediaType("image/png", ImageFormat::kPng);
  CheckClaimedMediaType("IMAGE/JPEG", ImageFormat::kJpeg);
  CheckClaimedMediaType("image/jpg", ImageFormat::kJpeg);
  CheckClaimedMediaType("image/webp; name=x", ImageFormat::kWebp);
}

TEST(CheckClaimedMediaType, RefusesALyingType) {
  ExpectError([] { CheckClaimedMediaType("image/png", ImageFormat::kJpeg); },
              ErrorKind::kInvalidArgument, "media type image/png does not match the JPEG data");
  ExpectError([] { CheckClaimedMediaType("image/webp", ImageFormat::kPng); },
              ErrorKind::kInvalidArgument, "media type image/webp does not match the PNG data");
  ExpectError([] { CheckClaimedMediaType("image/jpeg", ImageFormat::kWebp); },
              ErrorKind::kInvalidArgument, "media type image/jpeg does not match the WebP data");
}

TEST(CheckClaimedMediaType, RefusesUnknownAndNonImageTypes) {
  ExpectError([] { CheckClaimedMediaType("image/gif", ImageFormat::kPng); },
              ErrorKind::kUnsupported, "media type image/gif is not supported");
  ExpectError([] { CheckClaimedMediaType("text/plain", ImageFormat::kPng); },
              ErrorKind::kInvalidArgument, "media type text/plain is not an image type");
  ExpectError([] { CheckClaimedMediaType("", ImageFormat::kPng); }, ErrorKind::kInvalidArgument,
              "missing media type");
}

TEST(ImageFormat, NamesAndMediaTypes) {
  EXPECT_STREQ(ImageFormatName(ImageFormat::kWebp), "WebP");
  EXPECT_STREQ(ImageFormatMediaType(ImageFormat::kJpeg), "image/jpeg");
  EXPECT_EQ(ImageFormatForMediaType("image/png"), ImageFormat::kPng);
  EXPECT_EQ(ImageFormatForMediaType("image/bmp"), std::nullopt);
}

}  // namespace
}  // namespace tandem
