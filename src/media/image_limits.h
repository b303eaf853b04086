// Bounds an untrusted image must fit before any pixel is decoded. The decoders read the
// dimensions from the header first and check them here, so a small file that claims a huge
// picture (a decompression bomb) is refused before its pixel buffer is allocated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "media/image_format.h"

namespace tandem {

struct ImageLimits {
  // The encoded file.
  size_t max_bytes = size_t{20} << 20;  // 20 MiB
  // Decoded pixels: 50 million fit a 48-megapixel camera picture. The RGB buffer is 3 bytes per
  // pixel (150 MB at the limit) and an EXIF rotation briefly holds two.
  int64_t max_pixels = 50'000'000;
  // Either side, in pixels.
  int max_side = 16384;
};

// Throws Error(kInvalidArgument) naming the format and the size when a side is zero (or
// negative), over `max_side`, or width * height is over `max_pixels`.
void CheckImageDimensions(ImageFormat format, int64_t width, int64_t height,
                          const ImageLimits& limits);

// Throws Error(kInvalidArgument) when `size` bytes are over `limits.max_bytes`.
void CheckImageByteSize(size_t size, const ImageLimits& limits);

}  // namespace tandem
