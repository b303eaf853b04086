// The image path end to end on tiny random models: bytes -> prepared pixels -> key -> the
// encoder's rows through an engine job -> a prompt whose greedy output speculation leaves
// unchanged.
#include "multimodal/image_input.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encoders/gemma4v/encoder.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/gemma4v/random_mmproj.h"
#include "engine/generator.h"
#include "media/media_test_util.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "multimodal/image_prompt.h"
#include "speculative/loaded_drafters.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

using testing_media::EncodeJpegRgb;
using testing_media::EncodePngRgb;
using testing_media::ExpectError;
using testing_media::MakeTestPicture;

struct Fixture {
  std::unique_ptr<Gemma4Model> target;
  std::unique_ptr<Gemma4Assistant> assistant;
  std::unique_ptr<Gemma4VisionEncoder> vision;
  std::unique_ptr<Tokenizer> tokenizer;
};

const Fixture& Models() {
  static const Fixture* f = [] {
    const std::string dir = testing::TempDir() + "multimodal_" + std::to_string(getpid()) + "_";
    WriteRandomGemma4(Gemma4Preset("tiny-e2b"), {}, dir + "t.gguf");
    WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", true), {}, dir + "a.gguf");
    WriteRandomGemma4VisionMmproj(Gemma4VisionPreset("tiny"), {}, dir + "mm.gguf");
    auto* p = new Fixture;
    p->target = Gemma4Model::Load(dir + "t.gguf");
    p->assistant = Gemma4Assistant::Load(dir + "a.gguf", *p->target);
    p->vision = Gemma4VisionEncoder::Load(dir + "mm.gguf");
    p->tokenizer = std::make_unique<Tokenizer>(VocabFromGgufMetadata(p->target->metadata()));
    return p;
  }();
  return *f;
}

ImageInputOptions SmallImages() {
  ImageInputOptions o;
  o.prepare.rule = ResizeRule::kLlamaCpp;  // about the native size: a few tokens
  o.prepare.min_tokens = 1;
  o.prepare.max_tokens = 12;
  return o;
}

TEST(ImageInput, BytesBecomeTheEncodersRowsOnceAndThenComeFromTheCache) {
  ImageInput input(*Models().vision, SmallImages());
  const std::vector<uint8_t> png = EncodePngRgb(MakeTestPicture(144, 96, 3));
  const PreparedImage image = input.Prepare(png, "image/png");
  EXPECT_EQ(image.tokens, 6);
  PromptMedia media = input.ToMedia(image);
  ASSERT_TRUE(media.job);
  EXPECT_FALSE(media.embeddings);
  ThreadPool pool(2);
  // One piece per step: the patch embedding, each layer, then pooling and projection.
  int steps = 1;
  while (!media.job->Step(pool)) ++steps;
  EXPECT_EQ(steps, Models().vision->config().n_layer + 2);
  const auto rows = media.job->Result();
  const VisionPixels& px = *image.pixels;
  EXPECT_EQ(*rows, Models().vision->Encode(px.rgb.data(), px.width, px.height, pool));
  // The same picture as a JPEG is other pixels, so another key; the PNG again is served whole.
  EXPECT_NE(input.Prepare(EncodeJpegRgb(MakeTestPicture(144, 96, 3)), "").key, image.key);
  const PromptMedia again = input.ToMedia(input.Prepare(png, ""));
  EXPECT_FALSE(again.job);
  EXPECT_EQ(again.embeddings, rows);
  EXPECT_EQ(input.encodes(), 1u);
}

TEST(ImageInput, BadBytesAreRefusedSayingWhy) {
  ImageInput input(*Models().vision, SmallImages());
  const std::vector<uint8_t> png = EncodePngRgb(MakeTestPicture(48, 48, 1));
  ExpectError([&] { input.Prepare(png, "image/jpeg"); }, ErrorKind::kInvalidArgument,
              "does not match");
  std::vector<uint8_t> cut(png.begin(), png.begin() + png.size() / 2);
  EXPECT_THROW(input.Prepare(cut, ""), Error);
  ExpectError(
      [&] {
        input.Prepare(std::vector<uint8_t>{1, 2, 3, 4}, "");
      },
      ErrorKind::kInvalidArgument, "not a PNG, JPEG or WebP");
}

TEST(ImageInput, GreedyOutputAfterAnImageIsTheSameWithAndWithoutSpeculation) {
  const Fixture& m = Models();
  ImageInput input(*m.vision, SmallImages());
  const ImageTokens markup = FindImageTokens(*m.tokenizer);
  std::vector<int32_t> tokens = m.tokenizer->Encode("Look: <|image|> and <|image|> then say");
  std::vector<PromptMedia> images = {
      input.ToMedia(input.Prepare(EncodePngRgb(MakeTestPicture(144, 96, 3)), "")),
      input.ToMedia(input.Prepare(EncodePngRgb(MakeTestPicture(96, 144, 4)), ""))};
  EngineRequest request;
  ExpandImages(tokens, images, markup, request);
  ASSERT_EQ(request.media.size(), 2u);
  ThreadPool pool(2);
  GenerateParams greedy;
  greedy.n_predict = 32;
  greedy.sampling.temperature = 0;
  auto run = [&](SpecType type) {
    Generator gen(*m.target,
                  MakeDrafters({.target = *m.target,
                                .assistant = m.assistant.get(),
                                .draft_model = nullptr,
                                .pool = pool}),
                  pool, {.n_ctx = 256, .n_seq = 1, .max_batch = 64});
    GenerateParams p = greedy;
    p.spec.type = type;
    p.spec.adaptive = false;
    p.spec.draft_max = 4;
    return gen.Generate(request.prompt, request.media, p, nullptr);
  };
  const GenerateResult plain = run(SpecType::kNone);
  const GenerateResult mtp = run(SpecType::kMtp);
  EXPECT_EQ(mtp.tokens, plain.tokens);
  EXPECT_GT(mtp.spec.drafted, 0);
  EXPECT_EQ(run(SpecType::kChain).tokens, plain.tokens);
}

}  // namespace
}  // namespace tandem
