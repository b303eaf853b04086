#include "multimodal/image_input.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encoders/gemma4v/encoder.h"
#include "encoders/gemma4v/encoding.h"
#include "media/image_decode.h"
#include "media/image_format.h"

namespace tandem {

namespace {

// A 64-bit hash over whole words (a multiply-xorshift per word): the prepared pixels of a large
// image are megabytes, hashed on a request thread.
uint64_t HashBytes(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const uint8_t*>(data);
  auto mix = [&](uint64_t w) {
    h ^= w + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  uint64_t tail = n;
  for (; i < n; ++i) tail = (tail << 8) | p[i];
  mix(tail);
  return h;
}

}  // namespace

// Encodes one image a piece (a layer of the tower) per engine step.
class ImageInput::EncodeJob : public MediaJob {
 public:
  EncodeJob(ImageInput& input, PreparedImage image) : input_(input), image_(std::move(image)) {}
  bool Step(ThreadPool& pool) override {
    if (rows_) return true;
    if (!encoding_) {
      // A repeat of an image encoded for another request since this job was made.
      rows_ = input_.Cached(image_.key);
      if (rows_) return true;
      const VisionPixels& px = *image_.pixels;
      const Gemma4VisionEncoder::Image im{px.rgb.data(), px.width, px.height};
      encoding_ = std::make_unique<Gemma4VisionEncoding>(
          input_.encoder_, std::span<const Gemma4VisionEncoder::Image>(&im, 1));
    }
    if (!encoding_->Step(pool)) return false;
    rows_ = std::make_shared<const std::vector<float>>(std::move(encoding_->Take()[0]));
    encoding_.reset();
    input_.Keep(image_.key, rows_);
    return true;
  }
  std::shared_ptr<const std::vector<float>> Result() override { return rows_; }

 private:
  ImageInput& input_;
  PreparedImage image_;
  std::unique_ptr<Gemma4VisionEncoding> encoding_;
  std::shared_ptr<const std::vector<float>> rows_;
};

ImageInput::ImageInput(const Gemma4VisionEncoder& encoder, ImageInputOptions options)
    : encoder_(encoder), options_(std::move(options)) {
  const Gemma4VisionConfig& c = encoder_.config();
  options_.prepare.mean = c.image_mean;
  options_.prepare.std = c.image_std;
  options_.prepare.patch_size = c.patch_size;
  options_.prepare.pooling_kernel = c.pooling;
}

ImageInput::~ImageInput() = default;

PreparedImage ImageInput::Prepare(std::span<const uint8_t> bytes,
                                  const std::string& claimed_mime) const {
  CheckImageByteSize(bytes.size(), options_.limits);
  if (!claimed_mime.empty()) CheckClaimedMediaType(claimed_mime, SniffImageFormat(bytes));
  auto pixels = std::make_shared<VisionPixels>(
      PrepareImage(DecodeImage(bytes, options_.limits), options_.prepare));
  PreparedImage image;
  image.tokens = pixels->tokens;
  const int32_t dims[2] = {pixels->width, pixels->height};
  image.key = HashBytes(dims, sizeof dims, 0x5eed);
  image.key = HashBytes(pixels->rgb.data(), pixels->rgb.size() * sizeof(float), image.key);
  image.pixels = std::move(pixels);
  return image;
}

PromptMedia ImageInput::ToMedia(const PreparedImage& image) {
  PromptMedia media;
  media.count = image.tokens;
  media.key = image.key;
  media.embeddings = Cached(image.key);
  if (!media.embeddings) media.job = std::make_shared<EncodeJob>(*this, image);
  return media;
}

std::shared_ptr<const std::vector<float>> ImageInput::Cached(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void ImageInput::Keep(uint64_t key, std::shared_ptr<const std::vector<float>> rows) {
  std::lock_guard<std::mutex> lock(mu_);
  ++encodes_;
  if (by_key_.count(key) || options_.cached_images <= 0) return;
  lru_.emplace_front(key, std::move(rows));
  by_key_[key] = lru_.begin();
  while (static_cast<int>(lru_.size()) > options_.cached_images) {
    by_key_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

void ImageInput::CheckImageCount(size_t count) const {
  if (count > static_cast<size_t>(std::max(0, options_.max_per_request))) {
    Fail(ErrorKind::kInvalidArgument, std::to_string(count) + " images, but at most " +
                                          std::to_string(options_.max_per_request) +
                                          " are allowed in one request (--image-max-count)");
  }
}

uint64_t ImageInput::encodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return encodes_;
}

}  // namespace tandem
