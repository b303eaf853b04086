#include "multimodal/audio_input.h"

#include <algorithm>
#include <string>
#include <vector>

#include "base/error.h"
#include "encoders/gemma4a/encoder.h"
#include "encoders/gemma4a/encoding.h"
#include "media/audio_format.h"

namespace tandem {

// Encodes one recording a piece (a layer of the tower, per 30 s) per engine step.
class AudioInput::EncodeJob : public MediaJob {
 public:
  EncodeJob(AudioInput& input, PreparedAudio audio) : input_(input), audio_(std::move(audio)) {}
  bool Step(ThreadPool& pool) override {
    if (rows_) return true;
    if (!encoding_) {
      // A repeat of a recording encoded for another request since this job was made.
      rows_ = input_.cache_.Find(audio_.key);
      if (rows_) return true;
      for (const LogMel& chunk : audio_.features->chunks) {
        mel_.push_back({chunk.values.data(), chunk.frames});
      }
      encoding_ = std::make_unique<Gemma4AudioEncoding>(input_.encoder_, mel_);
    }
    if (!encoding_->Step(pool)) return false;
    rows_ = std::make_shared<const std::vector<float>>(encoding_->Take());
    encoding_.reset();
    input_.cache_.Keep(audio_.key, rows_);
    return true;
  }
  std::shared_ptr<const std::vector<float>> Result() override { return rows_; }

 private:
  AudioInput& input_;
  PreparedAudio audio_;
  std::vector<Gemma4AudioEncoder::Mel> mel_;
  std::unique_ptr<Gemma4AudioEncoding> encoding_;
  std::shared_ptr<const std::vector<float>> rows_;
};

AudioInput::AudioInput(const Gemma4AudioEncoder& encoder, AudioInputOptions options)
    : encoder_(encoder), options_(std::move(options)), cache_(options_.cached) {}

AudioInput::~AudioInput() = default;

PreparedAudio AudioInput::Prepare(std::span<const uint8_t> bytes,
                                  const std::string& claimed_format) const {
  CheckAudioByteSize(bytes.size(), options_.limits);
  if (!claimed_format.empty()) CheckClaimedAudioFormat(claimed_format, SniffAudioFormat(bytes));
  auto features =
      std::make_shared<AudioFeatures>(PrepareAudio(bytes, options_.limits, options_.features));
  PreparedAudio audio;
  audio.seconds = features->seconds;
  uint64_t key = 0xa0d10;
  for (const LogMel& chunk : features->chunks) {
    audio.tokens += Gemma4AudioEncoder::Tokens(chunk.frames);
    key = HashBytes(&chunk.frames, sizeof chunk.frames, key);
    key = HashBytes(chunk.values.data(), chunk.values.size() * sizeof(float), key);
  }
  audio.key = key;
  audio.features = std::move(features);
  return audio;
}

PromptMedia AudioInput::ToMedia(const PreparedAudio& audio) {
  PromptMedia media;
  media.count = audio.tokens;
  media.key = audio.key;
  media.audio = true;
  media.embeddings = cache_.Find(audio.key);
  if (!media.embeddings) media.job = std::make_shared<EncodeJob>(*this, audio);
  return media;
}

void AudioInput::CheckCount(size_t count) const {
  if (count > static_cast<size_t>(std::max(0, options_.max_per_request))) {
    Fail(ErrorKind::kInvalidArgument, std::to_string(count) + " audio parts, but at most " +
                                          std::to_string(options_.max_per_request) +
                                          " are allowed in one request (--audio-max-count)");
  }
}

}  // namespace tandem
