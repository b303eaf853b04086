// ResizeBicubicAntialiased (image_resize.h): Pillow's 8-bit resampling algorithm, checked byte
// for byte against Pillow itself (pil_oracle_test.cpp). Every floating-point step keeps
// Pillow's order of operations, since the window bounds and the fixed-point weights are
// rounded from them.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "media/image_resize.h"

namespace tandem {
namespace {

// Fractional bits of the fixed-point weights: 32 bits less 8 for the sample and 2 of headroom
// for the overshoot of a kernel with negative lobes.
constexpr int kPrecisionBits = 32 - 8 - 2;

double Bicubic(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}
constexpr double kBicubicSupport = 2.0;

// For each output index along one axis: the first input index it reads and the fixed-point
// weights of the inputs from there on.
struct AxisWeights {
  int taps = 0;                  // stride of `weights`
  std::vector<int> first;        // per output index
  std::vector<int> count;        // per output index
  std::vector<int32_t> weights;  // out_size * taps
};

AxisWeights ComputeAxisWeights(int in_size, int out_size) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filter_scale = std::max(scale, 1.0);  // wider window when shrinking
  const double support = kBicubicSupport * filter_scale;
  AxisWeights axis;
  axis.taps = static_cast<int>(std::ceil(support)) * 2 + 1;
  axis.first.resize(out_size);
  axis.count.resize(out_size);
  axis.weights.assign(static_cast<size_t>(out_size) * axis.taps, 0);
  std::vector<double> k(axis.taps);
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = (xx + 0.5) * scale;
    const double inv = 1.0 / filter_scale;
    int lo = static_cast<int>(center - support + 0.5);  // truncation, as Pillow rounds
    if (lo < 0) lo = 0;
    int hi = static_cast<int>(center + support + 0.5);
    if (hi > in_size) hi = in_size;
    const int n = hi - lo;
    double sum = 0.0;
    for (int x = 0; x < n; ++x) {
      const double w = Bicubic((x + lo - center + 0.5) * inv);
      k[x] = w;
      sum += w;
    }
    for (int x = 0; x < n; ++x) {
      if (sum != 0.0) k[x] /= sum;
    }
    int32_t* out = axis.weights.data() + static_cast<size_t>(xx) * axis.taps;
    for (int x = 0; x < n; ++x) {
      const double scaled = k[x] * (1 << kPrecisionBits);
      out[x] = static_cast<int32_t>(k[x] < 0 ? -0.5 + scaled : 0.5 + scaled);
    }
    axis.first[xx] = lo;
    axis.count[xx] = n;
  }
  return axis;
}

uint8_t Clip8(int32_t acc) {
  const int32_t v = acc >> kPrecisionBits;
  return static_cast<uint8_t>(std::clamp(v, 0, 255));
}

// Rows [row0, row0 + out.height) of `in`, resampled along x into `out`.
void ResampleRows(const RgbImage& in, int row0, const AxisWeights& axis, RgbImage& out) {
  for (int y = 0; y < out.height; ++y) {
    const uint8_t* src = in.Pixel(0, row0 + y);
    uint8_t* dst = out.Pixel(0, y);
    for (int xx = 0; xx < out.width; ++xx) {
      const int32_t* k = axis.weights.data() + static_cast<size_t>(xx) * axis.taps;
      const uint8_t* p = src + static_cast<size_t>(axis.first[xx]) * 3;
      int32_t s0 = 1 << (kPrecisionBits - 1);
      int32_t s1 = s0;
      int32_t s2 = s0;
      for (int x = 0; x < axis.count[xx]; ++x) {
        s0 += p[x * 3 + 0] * k[x];
        s1 += p[x * 3 + 1] * k[x];
        s2 += p[x * 3 + 2] * k[x];
      }
      dst[xx * 3 + 0] = Clip8(s0);
      dst[xx * 3 + 1] = Clip8(s1);
      dst[xx * 3 + 2] = Clip8(s2);
    }
  }
}

// `in` resampled along y into `out` (same width); `shift` is subtracted from the first rows.
void ResampleColumns(const RgbImage& in, int shift, const AxisWeights& axis, RgbImage& out) {
  const size_t stride = static_cast<size_t>(in.width) * 3;
  for (int yy = 0; yy < out.height; ++yy) {
    const int32_t* k = axis.weights.data() + static_cast<size_t>(yy) * axis.taps;
    const uint8_t* top = in.Pixel(0, axis.first[yy] - shift);
    uint8_t* dst = out.Pixel(0, yy);
    for (size_t i = 0; i < stride; ++i) {
      int32_t s = 1 << (kPrecisionBits - 1);
      for (int y = 0; y < axis.count[yy]; ++y) s += top[y * stride + i] * k[y];
      dst[i] = Clip8(s);
    }
  }
}

}  // namespace

RgbImage ResizeBicubicAntialiased(const RgbImage& image, int width, int height) {
  if (width <= 0 || height <= 0) {
    Fail(ErrorKind::kInvalidArgument, "resize to " + std::to_string(width) + "x" +
                                          std::to_string(height) + ": a side is not positive");
  }
  const bool horizontal = width != image.width;
  const bool vertical = height != image.height;
  if (!horizontal && !vertical) return image;
  const AxisWeights rows = ComputeAxisWeights(image.height, height);

  if (horizontal) {
    // Only the input rows the vertical pass will read.
    const int row_first = rows.first.front();
    const int row_last = rows.first.back() + rows.count.back();
    const AxisWeights cols = ComputeAxisWeights(image.width, width);
    RgbImage narrowed;
    narrowed.width = width;
    narrowed.height = vertical ? row_last - row_first : image.height;
    narrowed.rgb.resize(static_cast<size_t>(narrowed.width) * narrowed.height * 3);
    ResampleRows(image, vertical ? row_first : 0, cols, narrowed);
    if (!vertical) return narrowed;
    RgbImage out;
    out.width = width;
    out.height = height;
    out.rgb.resize(static_cast<size_t>(width) * height * 3);
    ResampleColumns(narrowed, row_first, rows, out);
    return out;
  }
  RgbImage out;
  out.width = image.width;
  out.height = height;
  out.rgb.resize(static_cast<size_t>(out.width) * height * 3);
  ResampleColumns(image, 0, rows, out);
  return out;
}

}  // namespace tandem
