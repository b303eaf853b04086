#include "encoders/gemma4v/encoder.h"

#include "encoders/gemma4v/encoding.h"
#include "encoders/mmproj_file.h"

namespace tandem {

std::unique_ptr<Gemma4VisionEncoder> Gemma4VisionEncoder::Load(const std::string& path,
                                                               const VisionOptions& options) {
  return Load(std::shared_ptr<const MmprojFile>(MmprojFile::Open(path)), options);
}

std::unique_ptr<Gemma4VisionEncoder> Gemma4VisionEncoder::Load(
    std::shared_ptr<const MmprojFile> file, const VisionOptions& options) {
  Gemma4VisionConfig config = Gemma4VisionConfig::FromMmproj(*file);
  const VisionActivation activation = config.Activation(options.gelu, file->path());
  Gemma4VisionWeights weights = Gemma4VisionWeights::Bind(file->gguf(), config);
  weights.PackPanels();
  if (options.repack) weights.Pack();
  return std::unique_ptr<Gemma4VisionEncoder>(
      new Gemma4VisionEncoder(std::move(file), std::move(config), std::move(weights), activation));
}

std::vector<float> Gemma4VisionEncoder::Encode(const float* rgb, int width, int height,
                                               ThreadPool& pool) const {
  const Image image{rgb, width, height};
  return std::move(EncodeBatch({&image, 1}, pool)[0]);
}

std::vector<std::vector<float>> Gemma4VisionEncoder::EncodeBatch(std::span<const Image> images,
                                                                 ThreadPool& pool) const {
  Gemma4VisionEncoding encoding(*this, images);
  while (!encoding.Step(pool)) {
  }
  return encoding.Take();
}

}  // namespace tandem
