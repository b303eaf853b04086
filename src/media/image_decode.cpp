#include "media/image_decode.h"

#include "media/format_decoders.h"

namespace tandem {

RgbImage DecodeImage(std::span<const uint8_t> bytes, const ImageLimits& limits) {
  CheckImageByteSize(bytes.size(), limits);
  switch (SniffImageFormat(bytes)) {
    case ImageFormat::kPng:
      return DecodePng(bytes, limits);
    case ImageFormat::kJpeg:
      return DecodeJpeg(bytes, limits);
    case ImageFormat::kWebp:
      return DecodeWebp(bytes, limits);
  }
  return {};
}

}  // namespace tandem
