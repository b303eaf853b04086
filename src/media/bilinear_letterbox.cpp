// ResizeBilinearLetterbox (image_resize.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "media/image_resize.h"

namespace tandem {
namespace {

// Corner-aligned bilinear: output pixel i of n samples input position i * (N - 1) / (n - 1),
// so the first and last pixels of each axis map onto the input's first and last.
RgbImage ResizeBilinearCornerAligned(const RgbImage& in, int width, int height) {
  RgbImage out;
  out.width = width;
  out.height = height;
  out.rgb.resize(static_cast<size_t>(width) * height * 3);
  const float sx =
      width > 1 ? static_cast<float>(in.width - 1) / static_cast<float>(width - 1) : 0.0f;
  const float sy =
      height > 1 ? static_cast<float>(in.height - 1) / static_cast<float>(height - 1) : 0.0f;
  for (int y = 0; y < height; ++y) {
    const float fy = static_cast<float>(y) * sy;
    const int y0 = std::min(static_cast<int>(fy), in.height - 1);
    const int y1 = std::min(y0 + 1, in.height - 1);
    const float ty = fy - static_cast<float>(y0);
    for (int x = 0; x < width; ++x) {
      const float fx = static_cast<float>(x) * sx;
      const int x0 = std::min(static_cast<int>(fx), in.width - 1);
      const int x1 = std::min(x0 + 1, in.width - 1);
      const float tx = fx - static_cast<float>(x0);
      const uint8_t* p00 = in.Pixel(x0, y0);
      const uint8_t* p01 = in.Pixel(x1, y0);
      const uint8_t* p10 = in.Pixel(x0, y1);
      const uint8_t* p11 = in.Pixel(x1, y1);
      uint8_t* dst = out.Pixel(x, y);
      for (int c = 0; c < 3; ++c) {
        const float top = p00[c] + (p01[c] - p00[c]) * tx;
        const float bottom = p10[c] + (p11[c] - p10[c]) * tx;
        const float v = top + (bottom - top) * ty;
        dst[c] = static_cast<uint8_t>(std::clamp(std::floor(v + 0.5f), 0.0f, 255.0f));
      }
    }
  }
  return out;
}

}  // namespace

RgbImage ResizeBilinearLetterbox(const RgbImage& image, int width, int height) {
  if (width <= 0 || height <= 0) {
    Fail(ErrorKind::kInvalidArgument, "resize to " + std::to_string(width) + "x" +
                                          std::to_string(height) + ": a side is not positive");
  }
  if (width == image.width && height == image.height) return image;
  const double scale = std::min(static_cast<double>(width) / image.width,
                                static_cast<double>(height) / image.height);
  const int inner_w = std::min(width, static_cast<int>(std::ceil(image.width * scale)));
  const int inner_h = std::min(height, static_cast<int>(std::ceil(image.height * scale)));
  const RgbImage inner =
      inner_w == image.width && inner_h == image.height
          ? image
          : ResizeBilinearCornerAligned(image, std::max(inner_w, 1), std::max(inner_h, 1));
  RgbImage out;
  out.width = width;
  out.height = height;
  out.rgb.assign(static_cast<size_t>(width) * height * 3, 0);  // black
  const int left = (width - inner.width) / 2;
  const int top = (height - inner.height) / 2;
  for (int y = 0; y < inner.height; ++y) {
    std::copy_n(inner.Pixel(0, y), static_cast<size_t>(inner.width) * 3, out.Pixel(left, top + y));
  }
  return out;
}

}  // namespace tandem
