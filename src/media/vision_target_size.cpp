#include "media/vision_target_size.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"

namespace tandem {
namespace {

void CheckSize(int width, int height, int patch_size, int pooling_kernel) {
  if (width <= 0 || height <= 0) {
    Fail(ErrorKind::kInvalidArgument, "image size " + std::to_string(width) + "x" +
                                          std::to_string(height) + " has a side of zero");
  }
  if (patch_size <= 0 || pooling_kernel <= 0) {
    Fail(ErrorKind::kInvalidArgument, "patch size and pooling kernel must be positive");
  }
}

}  // namespace

ImageSize BudgetTargetSize(int width, int height, int budget_tokens, int patch_size,
                           int pooling_kernel) {
  CheckSize(width, height, patch_size, pooling_kernel);
  if (budget_tokens < 1) {
    Fail(ErrorKind::kInvalidArgument,
         "image token budget " + std::to_string(budget_tokens) + " is not positive");
  }
  const long long max_patches =
      static_cast<long long>(budget_tokens) * pooling_kernel * pooling_kernel;
  const long long target_px = max_patches * patch_size * patch_size;
  const long long total_px = static_cast<long long>(width) * height;
  const double factor = std::sqrt(static_cast<double>(target_px) / static_cast<double>(total_px));
  const double ideal_height = factor * height;
  const double ideal_width = factor * width;
  const int unit = pooling_kernel * patch_size;
  long long target_height = static_cast<long long>(std::floor(ideal_height / unit)) * unit;
  long long target_width = static_cast<long long>(std::floor(ideal_width / unit)) * unit;
  if (target_height == 0 && target_width == 0) {
    Fail(ErrorKind::kInvalidArgument, "image token budget " + std::to_string(budget_tokens) +
                                          " is too small for one " + std::to_string(unit) + "x" +
                                          std::to_string(unit) + " block");
  }
  const long long max_side = max_patches / (pooling_kernel * pooling_kernel) * unit;
  if (target_height == 0) {
    target_height = unit;
    target_width = std::min(
        static_cast<long long>(std::floor(static_cast<double>(width) / height)) * unit, max_side);
  } else if (target_width == 0) {
    target_width = unit;
    target_height = std::min(
        static_cast<long long>(std::floor(static_cast<double>(height) / width)) * unit, max_side);
  }
  if (target_height * target_width > target_px) {
    Fail(ErrorKind::kInternal, "image target size over the budget");
  }
  return {static_cast<int>(target_width), static_cast<int>(target_height)};
}

ImageSize LlamaCppTargetSize(int width, int height, int min_tokens, int max_tokens, int patch_size,
                             int pooling_kernel) {
  CheckSize(width, height, patch_size, pooling_kernel);
  if (min_tokens < 1 || max_tokens < min_tokens) {
    Fail(ErrorKind::kInvalidArgument, "image token limits " + std::to_string(min_tokens) + ".." +
                                          std::to_string(max_tokens) + " need 1 <= min <= max");
  }
  const long long unit = static_cast<long long>(pooling_kernel) * patch_size;
  const double u = static_cast<double>(unit);
  const double min_px = static_cast<double>(min_tokens) * unit * unit;
  const double max_px = static_cast<double>(max_tokens) * unit * unit;
  const double w = width;
  const double h = height;
  long long tw = std::max(unit, static_cast<long long>(std::round(w / u)) * unit);
  long long th = std::max(unit, static_cast<long long>(std::round(h / u)) * unit);
  if (static_cast<double>(tw) * static_cast<double>(th) > max_px) {
    const double beta = std::sqrt(h * w / max_px);
    th = std::max(unit, static_cast<long long>(std::floor(h / beta / u)) * unit);
    tw = std::max(unit, static_cast<long long>(std::floor(w / beta / u)) * unit);
  } else if (static_cast<double>(tw) * static_cast<double>(th) < min_px) {
    const double beta = std::sqrt(min_px / (h * w));
    th = static_cast<long long>(std::ceil(h * beta / u)) * unit;
    tw = static_cast<long long>(std::ceil(w * beta / u)) * unit;
  }
  // Only pictures over max_tokens : 1 get here with too many tokens; cut the long side.
  while ((tw / unit) * (th / unit) > max_tokens) {
    if (tw >= th) {
      tw = std::max(unit, max_tokens / (th / unit) * unit);
    } else {
      th = std::max(unit, max_tokens / (tw / unit) * unit);
    }
  }
  return {static_cast<int>(tw), static_cast<int>(th)};
}

}  // namespace tandem
