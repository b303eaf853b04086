#include "media/image_format.h"

#include <cstring>

#include "base/error.h"

namespace tandem {
namespace {

// The media type without parameters or surrounding blanks, in lower case.
std::string BareMediaType(std::string_view mime) {
  size_t semicolon = mime.find(';');
  if (semicolon != std::string_view::npos) mime = mime.substr(0, semicolon);
  while (!mime.empty() && (mime.front() == ' ' || mime.front() == '\t')) mime.remove_prefix(1);
  while (!mime.empty() && (mime.back() == ' ' || mime.back() == '\t')) mime.remove_suffix(1);
  std::string bare(mime);
  for (char& c : bare) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return bare;
}

bool StartsWith(std::span<const uint8_t> bytes, size_t offset, const char* magic, size_t n) {
  return bytes.size() >= offset + n && std::memcmp(bytes.data() + offset, magic, n) == 0;
}

}  // namespace

const char* ImageFormatName(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "PNG";
    case ImageFormat::kJpeg:
      return "JPEG";
    case ImageFormat::kWebp:
      return "WebP";
  }
  return "unknown";
}

const char* ImageFormatMediaType(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "image/png";
    case ImageFormat::kJpeg:
      return "image/jpeg";
    case ImageFormat::kWebp:
      return "image/webp";
  }
  return "application/octet-stream";
}

ImageFormat SniffImageFormat(std::span<const uint8_t> bytes) {
  if (StartsWith(bytes, 0, "\x89PNG\r\n\x1a\n", 8)) return ImageFormat::kPng;
  if (StartsWith(bytes, 0, "\xff\xd8\xff", 3)) return ImageFormat::kJpeg;
  if (StartsWith(bytes, 0, "RIFF", 4) && StartsWith(bytes, 8, "WEBP", 4)) {
    return ImageFormat::kWebp;
  }
  Fail(ErrorKind::kInvalidArgument, "not a PNG, JPEG or WebP image");
}

std::optional<ImageFormat> ImageFormatForMediaType(std::string_view mime) {
  std::string bare = BareMediaType(mime);
  if (bare == "image/png") return ImageFormat::kPng;
  if (bare == "image/jpeg" || bare == "image/jpg") return ImageFormat::kJpeg;
  if (bare == "image/webp") return ImageFormat::kWebp;
  return std::nullopt;
}

void CheckClaimedMediaType(const std::string& mime, ImageFormat sniffed) {
  std::string bare = BareMediaType(mime);
  if (bare.empty()) Fail(ErrorKind::kInvalidArgument, "missing media type for an image");
  std::optional<ImageFormat> claimed = ImageFormatForMediaType(bare);
  if (!claimed) {
    if (bare.rfind("image/", 0) == 0) {
      Fail(ErrorKind::kUnsupported, "media type " + bare +
                                        " is not supported (image/png, image/jpeg and "
                                        "image/webp are)");
    }
    Fail(ErrorKind::kInvalidArgument, "media type " + bare + " is not an image type");
  }
  if (*claimed != sniffed) {
    Fail(ErrorKind::kInvalidArgument,
         "media type " + bare + " does not match the " + ImageFormatName(sniffed) + " data");
  }
}

}  // namespace tandem
