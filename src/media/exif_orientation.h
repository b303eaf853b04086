// EXIF Orientation: how a camera says the stored picture must be turned to be upright. Values
// 1-8 as the EXIF/TIFF specification numbers them (1 = as stored, 3 = 180 degrees, 6 = rotate
// 90 degrees clockwise, 8 = 90 counter-clockwise, 2/4/5/7 their mirror images).
#pragma once

#include <cstdint>
#include <span>

#include "media/rgb_image.h"

namespace tandem {

// The Orientation tag (0x0112, a SHORT) of IFD0 in an EXIF block as a JPEG APP1 segment holds
// it ("Exif\0\0" then the TIFF structure), read with libexif. 1 when the block, the tag or a
// usable value is missing, or the value is outside 1..8: a picture is never refused for its
// metadata, and like Pillow's exif_transpose an unknown value turns nothing.
int ReadExifOrientation(std::span<const uint8_t> exif);

// The same for an EXIF block as PNG's eXIf chunk and WebP's EXIF chunk hold it: the TIFF
// structure alone, or (as some writers put it) after "Exif\0\0".
int ReadTiffExifOrientation(std::span<const uint8_t> tiff);

// The picture turned upright: for orientations 5-8 width and height swap. Other values return
// the image unchanged.
RgbImage ApplyExifOrientation(RgbImage image, int orientation);

}  // namespace tandem
