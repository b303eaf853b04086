// From image bytes to the rows an image takes in a prompt: decoded (media/image_decode.h: the
// format sniffed, a claimed media type checked, limits before pixels, EXIF orientation), prepared
// (media/vision_preprocess.h: the size rule and the mmproj's mean and std), keyed by a hash of the
// prepared pixels, and encoded by the vision tower as a MediaJob that the engine runs; encoded
// images are kept by key, so an image sent again costs no encode. The path in full:
// docs/architecture.md § How an image travels
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/request.h"
#include "media/image_limits.h"
#include "media/vision_preprocess.h"
#include "multimodal/media_cache.h"

namespace tandem {

class Gemma4VisionEncoder;

struct ImageInputOptions {
  VisionPreprocessOptions prepare;  // mean and std are the mmproj's
  ImageLimits limits;
  int cached_images = 16;    // encoded images kept by key
  int max_per_request = 16;  // images one request may hold (checked by CheckImageCount)
};

// An image ready to encode.
struct PreparedImage {
  uint64_t key = 0;
  int tokens = 0;
  std::shared_ptr<const VisionPixels> pixels;
};

class ImageInput {
 public:
  ImageInput(const Gemma4VisionEncoder& encoder, ImageInputOptions options);
  ~ImageInput();

  const Gemma4VisionEncoder& encoder() const { return encoder_; }
  const ImageInputOptions& options() const { return options_; }

  // Any thread. Throws Error(kInvalidArgument / kCorrupt / kUnsupported) saying what is wrong
  // with the bytes; `claimed_mime` (may be empty: not checked) must match them.
  PreparedImage Prepare(std::span<const uint8_t> bytes, const std::string& claimed_mime) const;

  // The image as a prompt media item (begin left 0): its rows from the cache, or a job that
  // encodes them on the engine's pool and keeps them.
  PromptMedia ToMedia(const PreparedImage& image);

  // Throws Error(kInvalidArgument) when `count` images are over options().max_per_request.
  void CheckImageCount(size_t count) const;

  // Encodes run so far.
  uint64_t encodes() const { return cache_.encodes(); }

 private:
  class EncodeJob;

  const Gemma4VisionEncoder& encoder_;
  ImageInputOptions options_;
  MediaRowCache cache_;
};

}  // namespace tandem
