// libFuzzer target: arbitrary bytes as an image (PNG, JPEG with EXIF, WebP) and as a data URL;
// what decodes goes on through both preprocessing rules. Only tandem::Error may escape; anything
// else (crash, leak, UB, OOM, a hang) is a finding. Seeds: corpus/fuzz_image_decode/, tiny
// files of each kind written with Pillow.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/error.h"
#include "media/data_url.h"
#include "media/image_decode.h"
#include "media/image_resize.h"
#include "media/vision_preprocess.h"
#include "media/vision_target_size.h"

namespace {

// Smaller than the defaults so one input's buffers stay far below the fuzzer's RSS limit.
tandem::ImageLimits FuzzLimits() {
  tandem::ImageLimits limits;
  limits.max_bytes = size_t{1} << 20;
  limits.max_pixels = int64_t{1} << 22;
  limits.max_side = 4096;
  return limits;
}

void CheckDecoded(const tandem::RgbImage& image, const tandem::ImageLimits& limits) {
  if (image.width <= 0 || image.height <= 0 || image.width > limits.max_side ||
      image.height > limits.max_side ||
      image.rgb.size() != size_t(image.width) * size_t(image.height) * 3) {
    __builtin_trap();
  }
}

// Both resize rules with token counts small enough to keep each run short (the outputs of the
// real budgets, 40 to 1120 tokens, are what makes a run slow, not what finds bugs).
void Preprocess(const tandem::RgbImage& image) {
  if (size_t(image.width) * size_t(image.height) > 65536) return;
  const tandem::ImageSize target = tandem::BudgetTargetSize(image.width, image.height, 4);
  tandem::RgbImage resized = tandem::ResizeBicubicAntialiased(image, target.width, target.height);
  if (resized.width % 48 != 0 || resized.height % 48 != 0 ||
      (resized.width / 48) * (resized.height / 48) > 4 ||
      resized.rgb.size() != size_t(resized.width) * size_t(resized.height) * 3) {
    __builtin_trap();
  }
  tandem::VisionPreprocessOptions llama;
  llama.rule = tandem::ResizeRule::kLlamaCpp;
  llama.min_tokens = 1;
  llama.max_tokens = 4;
  tandem::VisionPixels pixels = tandem::PrepareImage(image, llama);
  if (pixels.width % 48 != 0 || pixels.height % 48 != 0 || pixels.tokens < 1 || pixels.tokens > 4 ||
      pixels.rgb.size() != size_t(pixels.width) * size_t(pixels.height) * 3) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tandem::ImageLimits limits = FuzzLimits();
  try {
    tandem::RgbImage image = tandem::DecodeImage(std::span<const uint8_t>(data, size), limits);
    CheckDecoded(image, limits);
    Preprocess(image);
  } catch (const tandem::Error&) {
  }
  try {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    tandem::DataUrl url = tandem::ParseDataUrl(text, limits.max_bytes);
    tandem::CheckClaimedMediaType(url.mime, tandem::SniffImageFormat(url.bytes));
    CheckDecoded(tandem::DecodeImage(url.bytes, limits), limits);
  } catch (const tandem::Error&) {
  }
  return 0;
}
