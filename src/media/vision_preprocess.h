// A decoded picture to the vision encoder's input: resized to a size whose sides are multiples
// of u = patch_size * pooling_kernel (48 for Gemma 4), then each sample x becomes
// (x / 255 - mean[c]) / std[c]. Two rules, see docs/media.md:
//  - kBudget (default): transformers' Gemma 4 processor, the reference: the picture fills a
//    token budget (vision_target_size.h BudgetTargetSize) and is stretched to it with Pillow's
//    antialiased bicubic (image_resize.h ResizeBicubicAntialiased);
//  - kLlamaCpp: llama.cpp's mtmd: about the native size, kept within min..max tokens
//    (LlamaCppTargetSize), letterboxed with bilinear (ResizeBilinearLetterbox).
// A picture already at its target size is not resampled by either rule.
#pragma once

#include <array>
#include <vector>

#include "media/rgb_image.h"

namespace tandem {

enum class ResizeRule { kBudget, kLlamaCpp };

struct VisionPreprocessOptions {
  ResizeRule rule = ResizeRule::kBudget;
  int budget_tokens = 280;  // kBudget: one of 70, 140, 280, 560, 1120, as transformers accepts
  int min_tokens = 40;      // kLlamaCpp: llama.cpp's defaults
  int max_tokens = 280;
  int patch_size = 16;
  int pooling_kernel = 3;
  // Per channel (R, G, B), from the mmproj's image_mean / image_std; Gemma 4's are 0 and 1, so
  // the encoder receives x / 255. std must be finite and non-zero.
  std::array<float, 3> mean = {0.0f, 0.0f, 0.0f};
  std::array<float, 3> std = {1.0f, 1.0f, 1.0f};
};

struct VisionPixels {
  int width = 0;   // a multiple of patch_size * pooling_kernel
  int height = 0;  // likewise
  int tokens = 0;  // (width / u) * (height / u): the soft tokens the picture becomes
  // height * width * 3 floats, row-major HWC: channel c of pixel (x, y) at (y * width + x) * 3 + c.
  std::vector<float> rgb;
};

// Throws Error(kInvalidArgument) for an empty image or bad options (a budget transformers does
// not accept, min/max tokens out of order, zero std).
VisionPixels PrepareImage(const RgbImage& image, const VisionPreprocessOptions& options = {});

}  // namespace tandem
