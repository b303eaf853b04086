#include "media/exif_orientation.h"

#include <libexif/exif-data.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace tandem {
namespace {

struct ExifDataUnref {
  ExifData* data;
  ~ExifDataUnref() {
    if (data) exif_data_unref(data);
  }
};

}  // namespace

int ReadExifOrientation(std::span<const uint8_t> exif) {
  if (exif.size() < 6) return 1;
  ExifDataUnref parsed{exif_data_new()};
  if (!parsed.data) return 1;
  // Read the tags as stored: by default libexif "fixes" the data after loading (adds the
  // entries the specification makes mandatory, drops misplaced ones).
  exif_data_unset_option(parsed.data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION);
  exif_data_load_data(parsed.data, exif.data(), static_cast<unsigned int>(exif.size()));
  ExifEntry* entry = exif_content_get_entry(parsed.data->ifd[EXIF_IFD_0], EXIF_TAG_ORIENTATION);
  if (!entry || entry->format != EXIF_FORMAT_SHORT || entry->components < 1 || !entry->data ||
      entry->size < 2) {
    return 1;
  }
  int value = exif_get_short(entry->data, exif_data_get_byte_order(parsed.data));
  return value >= 1 && value <= 8 ? value : 1;
}

int ReadTiffExifOrientation(std::span<const uint8_t> tiff) {
  static constexpr uint8_t kHeader[6] = {'E', 'x', 'i', 'f', 0, 0};
  if (tiff.size() >= 6 && std::equal(tiff.begin(), tiff.begin() + 6, kHeader)) {
    return ReadExifOrientation(tiff);
  }
  std::vector<uint8_t> block(kHeader, kHeader + 6);
  block.insert(block.end(), tiff.begin(), tiff.end());
  return ReadExifOrientation(block);
}

RgbImage ApplyExifOrientation(RgbImage image, int orientation) {
  if (orientation < 2 || orientation > 8) return image;
  const int w = image.width;
  const int h = image.height;
  const bool swap = orientation >= 5;
  RgbImage out;
  out.width = swap ? h : w;
  out.height = swap ? w : h;
  out.rgb.resize(image.rgb.size());
  for (int y = 0; y < out.height; ++y) {
    for (int x = 0; x < out.width; ++x) {
      // The stored pixel (sx, sy) that lands at (x, y) of the upright picture.
      int sx = x;
      int sy = y;
      switch (orientation) {
        case 2:  // mirrored left-right
          sx = w - 1 - x;
          break;
        case 3:  // upside down
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;
        case 4:  // mirrored top-bottom
          sy = h - 1 - y;
          break;
        case 5:  // transposed: stored rows are upright columns
          sx = y;
          sy = x;
          break;
        case 6:  // needs 90 degrees clockwise
          sx = y;
          sy = h - 1 - x;
          break;
        case 7:  // transversed
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;
        case 8:  // needs 90 degrees counter-clockwise
          sx = w - 1 - y;
          sy = x;
          break;
      }
      const uint8_t* src = image.Pixel(sx, sy);
      uint8_t* dst = out.Pixel(x, y);
      dst[0] = src[0];
      dst[1] = src[1];
      dst[2] = src[2];
    }
  }
  return out;
}

}  // namespace tandem
