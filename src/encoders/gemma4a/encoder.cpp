#include "encoders/gemma4a/encoder.h"

#include "encoders/gemma4a/encoding.h"
#include "encoders/gemma4a/subsampling.h"
#include "encoders/mmproj_file.h"

namespace tandem {

std::unique_ptr<Gemma4AudioEncoder> Gemma4AudioEncoder::Load(const std::string& path,
                                                             const AudioEncoderOptions& options) {
  return Load(std::shared_ptr<const MmprojFile>(MmprojFile::Open(path)), options);
}

std::unique_ptr<Gemma4AudioEncoder> Gemma4AudioEncoder::Load(std::shared_ptr<const MmprojFile> file,
                                                             const AudioEncoderOptions& options) {
  Gemma4AudioConfig config = Gemma4AudioConfig::FromMmproj(*file);
  Gemma4AudioWeights weights = Gemma4AudioWeights::Bind(file->gguf(), config);
  weights.PackPanels();
  if (options.repack) weights.Pack();
  return std::unique_ptr<Gemma4AudioEncoder>(
      new Gemma4AudioEncoder(std::move(file), std::move(config), std::move(weights)));
}

int Gemma4AudioEncoder::Tokens(int n_frames) {
  return SubsampledLength(SubsampledLength(n_frames));
}

std::vector<float> Gemma4AudioEncoder::Encode(std::span<const Mel> pieces, ThreadPool& pool) const {
  Gemma4AudioEncoding encoding(*this, pieces);
  while (!encoding.Step(pool)) {
  }
  return encoding.Take();
}

}  // namespace tandem
