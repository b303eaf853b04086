#include "media/image_limits.h"

#include <string>

#include "base/error.h"

namespace tandem {

void CheckImageDimensions(ImageFormat format, int64_t width, int64_t height,
                          const ImageLimits& limits) {
  std::string what = std::string(ImageFormatName(format)) + " image of " + std::to_string(width) +
                     "x" + std::to_string(height) + " pixels";
  if (width <= 0 || height <= 0) Fail(ErrorKind::kInvalidArgument, what + ": a side is zero");
  if (width > limits.max_side || height > limits.max_side) {
    Fail(ErrorKind::kInvalidArgument,
         what + ": a side is over the limit of " + std::to_string(limits.max_side));
  }
  if (width * height > limits.max_pixels) {
    Fail(ErrorKind::kInvalidArgument,
         what + ": over the limit of " + std::to_string(limits.max_pixels) + " pixels");
  }
}

void CheckImageByteSize(size_t size, const ImageLimits& limits) {
  if (size > limits.max_bytes) {
    Fail(ErrorKind::kInvalidArgument, "image of " + std::to_string(size) +
                                          " bytes is over the limit of " +
                                          std::to_string(limits.max_bytes) + " bytes");
  }
}

}  // namespace tandem
