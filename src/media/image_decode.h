// Image bytes (PNG, JPEG or WebP) to 8-bit RGB, with Debian's libpng, libjpeg-turbo and libwebp.
// The pixels are those of Pillow's Image.open(...).convert("RGB"), what transformers' processors
// receive (checked byte for byte in pil_oracle_test.cpp); docs/media.md has the details:
//  - alpha is dropped, not composited: the RGB samples are kept as stored;
//  - grayscale is replicated to R = G = B; PNG palettes are looked up; PNG bit depths 1, 2, 4
//    are scaled to 0..255 and 16-bit samples keep their high byte; gamma and colour-profile
//    chunks are ignored (values pass through unconverted);
//  - CMYK and YCCK JPEGs are taken as Adobe-inverted CMYK: R = C'K'/255 rounded, from the stored
//    values, likewise G and B;
//  - a JPEG's EXIF Orientation tag (1-8) is applied, as transformers' load_image does with
//    ImageOps.exif_transpose; PNG and WebP EXIF data are not read;
//  - an animated WebP is refused (kUnsupported).
// Every failure is an Error: kInvalidArgument for what the caller sent (not an image, over a
// limit), kCorrupt for bytes that break their format ("truncated PNG image", "corrupt JPEG
// image: <library message>"), kUnsupported for well-formed features not handled.
#pragma once

#include <cstdint>
#include <span>

#include "media/image_format.h"
#include "media/image_limits.h"
#include "media/rgb_image.h"

namespace tandem {

// Checks the byte size, sniffs the format, reads the header, checks the dimensions against
// `limits`, and only then decodes the pixels.
RgbImage DecodeImage(std::span<const uint8_t> bytes, const ImageLimits& limits = {});

}  // namespace tandem
