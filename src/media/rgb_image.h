// A decoded picture: 8-bit RGB, row-major, 3 bytes per pixel (HWC), no padding between rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tandem {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3 bytes: R, G, B of pixel (x, y) at (y*width+x)*3

  const uint8_t* Pixel(int x, int y) const { return rgb.data() + (size_t(y) * width + x) * 3; }
  uint8_t* Pixel(int x, int y) { return rgb.data() + (size_t(y) * width + x) * 3; }
};

}  // namespace tandem
