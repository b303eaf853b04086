#include "media/data_url.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "media/base64.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::ExpectError;

std::string Str(const std::vector<uint8_t>& v) {
  return {v.begin(), v.end()};
}

TEST(Base64, DecodesRfc4648TestVectorsPaddedAndUnpadded) {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"Zg==", "f"},
                                                         {"Zm8=", "fo"},
                                                         {"Zm9v", "foo"},
                                                         {"Zm9vYg==", "foob"},
                                                         {"Zm9vYmE=", "fooba"},
                                                         {"Zm9vYmFy", "foobar"}};
  for (const auto& [text, plain] : vectors) {
    EXPECT_EQ(Str(DecodeBase64(text, 100)), plain) << text;
    std::string unpadded(text);
    while (!unpadded.empty() && unpadded.back() == '=') unpadded.pop_back();
    EXPECT_EQ(Str(DecodeBase64(unpadded, 100)), plain) << unpadded;
    EXPECT_EQ(Base64DecodedSize(unpadded), std::string(plain).size());
  }
  EXPECT_EQ(DecodeBase64("+/8=", 10), (std::vector<uint8_t>{0xfb, 0xff}));
}

TEST(Base64, RefusesWhatIsNotStrict) {
  ExpectError([] { DecodeBase64("Zm9v\nYmFy", 100); }, ErrorKind::kInvalidArgument,
              "invalid byte 0x0a at offset 4");
  ExpectError([] { DecodeBase64("Zm9v YmFy", 100); }, ErrorKind::kInvalidArgument,
              "invalid byte 0x20 at offset 4");
  ExpectError([] { DecodeBase64("Zm9-", 100); }, ErrorKind::kInvalidArgument,
              "invalid '-' at offset 3");
  ExpectError([] { DecodeBase64("Zg=a", 100); }, ErrorKind::kInvalidArgument,
              "invalid '=' at offset 2");
  ExpectError([] { DecodeBase64("Zg=", 100); }, ErrorKind::kInvalidArgument, "bad '=' padding");
  ExpectError([] { DecodeBase64("Z===", 100); }, ErrorKind::kInvalidArgument, "bad '=' padding");
  ExpectError([] { DecodeBase64("Zm9vY", 100); }, ErrorKind::kInvalidArgument,
              "5 characters leave one dangling character");
  ExpectError([] { DecodeBase64("Zh==", 100); }, ErrorKind::kInvalidArgument,
              "non-zero unused bits");
}

TEST(Base64, ChecksTheLimitBeforeDecoding) {
  // The bad character at the end is never reached: the size is refused first.
  std::string text(4000, 'A');
  text.back() = '*';
  ExpectError([&] { DecodeBase64(text, 2999); }, ErrorKind::kInvalidArgument,
              "decodes to 3000 bytes, over the limit of 2999");
  EXPECT_EQ(DecodeBase64(std::string(4000, 'A'), 3000).size(), 3000u);
}

TEST(DataUrl, ParsesTypeAndPayload) {
  DataUrl url = ParseDataUrl("data:image/png;base64,Zm9vYmFy", 100);
  EXPECT_EQ(url.mime, "image/png");
  EXPECT_EQ(Str(url.bytes), "foobar");
  DataUrl with_params = ParseDataUrl("DATA:Image/JPEG;name=cat.jpg;BASE64,Zm9v", 100);
  EXPECT_EQ(with_params.mime, "image/jpeg");
  EXPECT_EQ(Str(with_params.bytes), "foo");
  EXPECT_TRUE(ParseDataUrl("data:image/webp;base64,", 100).bytes.empty());
  EXPECT_TRUE(IsDataUrl("Data:x"));
  EXPECT_FALSE(IsDataUrl("https://example.com/cat.png"));
  EXPECT_FALSE(IsDataUrl("data"));
}

TEST(DataUrl, RefusesMalformedUrls) {
  ExpectError([] { ParseDataUrl("https://x/y.png", 100); }, ErrorKind::kInvalidArgument,
              "does not start with data:");
  ExpectError([] { ParseDataUrl("data:image/png;base64", 100); }, ErrorKind::kInvalidArgument,
              "no ','");
  ExpectError([] { ParseDataUrl("data:image/png,Zm9v", 100); }, ErrorKind::kUnsupported,
              "not base64");
  ExpectError([] { ParseDataUrl("data:image/png;base64x,Zm9v", 100); }, ErrorKind::kUnsupported,
              "not base64");
  ExpectError([] { ParseDataUrl("data:;base64,Zm9v", 100); }, ErrorKind::kInvalidArgument,
              "no media type");
  ExpectError([] { ParseDataUrl("data:png;base64,Zm9v", 100); }, ErrorKind::kInvalidArgument,
              "malformed media type 'png'");
  ExpectError([] { ParseDataUrl("data:image/;base64,Zm9v", 100); }, ErrorKind::kInvalidArgument,
              "malformed media type");
  ExpectError([] { ParseDataUrl("data:image/p g;base64,Zm9v", 100); }, ErrorKind::kInvalidArgument,
              "malformed media type");
  ExpectError([] { ParseDataUrl("data:image/png;base64,Zm9v\r\nYmFy", 100); },
              ErrorKind::kInvalidArgument,
              "data URL: payload: base64: invalid byte 0x0d at offset 4");
  ExpectError([] { ParseDataUrl("data:image/png;base64,Zm9vYmFy", 5); },
              ErrorKind::kInvalidArgument, "decodes to 6 bytes, over the limit of 5");
}

}  // namespace
}  // namespace tandem
