#include "media/vision_preprocess.h"

#include <cmath>
#include <string>

#include "base/error.h"
#include "media/image_resize.h"
#include "media/vision_target_size.h"

namespace tandem {
namespace {

void CheckOptions(const VisionPreprocessOptions& options) {
  if (options.rule == ResizeRule::kBudget) {
    const int b = options.budget_tokens;
    if (b != 70 && b != 140 && b != 280 && b != 560 && b != 1120) {
      Fail(ErrorKind::kInvalidArgument,
           "image token budget " + std::to_string(b) + " is not one of 70, 140, 280, 560, 1120");
    }
  }
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(options.mean[c]) || !std::isfinite(options.std[c]) ||
        options.std[c] == 0.0f) {
      Fail(ErrorKind::kInvalidArgument,
           "image mean/std channel " + std::to_string(c) + " is not finite or std is zero");
    }
  }
}

}  // namespace

VisionPixels PrepareImage(const RgbImage& image, const VisionPreprocessOptions& options) {
  CheckOptions(options);
  if (image.width <= 0 || image.height <= 0 ||
      image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
    Fail(ErrorKind::kInvalidArgument, "image of " + std::to_string(image.width) + "x" +
                                          std::to_string(image.height) +
                                          " pixels is empty or inconsistent");
  }
  const bool budget = options.rule == ResizeRule::kBudget;
  const ImageSize target =
      budget ? BudgetTargetSize(image.width, image.height, options.budget_tokens,
                                options.patch_size, options.pooling_kernel)
             : LlamaCppTargetSize(image.width, image.height, options.min_tokens, options.max_tokens,
                                  options.patch_size, options.pooling_kernel);
  const RgbImage resized = budget ? ResizeBicubicAntialiased(image, target.width, target.height)
                                  : ResizeBilinearLetterbox(image, target.width, target.height);

  VisionPixels out;
  out.width = resized.width;
  out.height = resized.height;
  const int unit = options.patch_size * options.pooling_kernel;
  out.tokens = (out.width / unit) * (out.height / unit);
  out.rgb.resize(resized.rgb.size());
  // x * (1/255) in float, as transformers rescales (a float32 multiply by the float32 of
  // 1/255); with mean 0 and std 1 the next step changes no bit.
  const float rescale = static_cast<float>(1.0 / 255.0);
  for (size_t i = 0; i < resized.rgb.size(); ++i) {
    const int c = static_cast<int>(i % 3);
    out.rgb[i] = (static_cast<float>(resized.rgb[i]) * rescale - options.mean[c]) / options.std[c];
  }
  return out;
}

}  // namespace tandem
