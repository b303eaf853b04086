#include "multimodal/image_input.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encoders/gemma4v/encoder.h"
#include "encoders/gemma4v/encoding.h"
#include "media/image_decode.h"
#include "media/image_format.h"

namespace tandem {

// Encodes one image a piece (a layer of the tower) per engine step.
class ImageInput::EncodeJob : public MediaJob {
 public:
  EncodeJob(ImageInput& input, PreparedImage image) : input_(input), image_(std::move(image)) {}
  bool Step(ThreadPool& pool) override {
    if (rows_) return true;
    if (!encoding_) {
      // A repeat of an image encoded for another request since this job was made.
      rows_ = input_.cache_.Find(image_.key);
      if (rows_) return true;
      const VisionPixels& px = *image_.pixels;
      const Gemma4VisionEncoder::Image im{px.rgb.data(), px.width, px.height};
      encoding_ = std::make_unique<Gemma4VisionEncoding>(
          input_.encoder_, std::span<const Gemma4VisionEncoder::Image>(&im, 1));
    }
    if (!encoding_->Step(pool)) return false;
    rows_ = std::make_shared<const std::vector<float>>(std::move(encoding_->Take()[0]));
    encoding_.reset();
    input_.cache_.Keep(image_.key, rows_);
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
    : encoder_(encoder), options_(std::move(options)), cache_(options_.cached_images) {
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
  media.embeddings = cache_.Find(image.key);
  if (!media.embeddings) media.job = std::make_shared<EncodeJob>(*this, image);
  return media;
}

void ImageInput::CheckImageCount(size_t count) const {
  if (count > static_cast<size_t>(std::max(0, options_.max_per_request))) {
    Fail(ErrorKind::kInvalidArgument, std::to_string(count) + " images, but at most " +
                                          std::to_string(options_.max_per_request) +
                                          " are allowed in one request (--image-max-count)");
  }
}

}  // namespace tandem
