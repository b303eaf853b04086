// One decoder per container, behind DecodeImage (image_decode.h), which has already checked the
// byte size and the magic bytes. Each checks the header's dimensions with CheckImageDimensions
// before it allocates or decodes any pixel.
#pragma once

#include <cstdint>
#include <span>

#include "media/image_limits.h"
#include "media/rgb_image.h"

namespace tandem {

RgbImage DecodePng(std::span<const uint8_t> bytes, const ImageLimits& limits);
RgbImage DecodeJpeg(std::span<const uint8_t> bytes, const ImageLimits& limits);
RgbImage DecodeWebp(std::span<const uint8_t> bytes, const ImageLimits& limits);

}  // namespace tandem
