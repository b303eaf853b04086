// The image path end to end on tiny random models: bytes -> prepared pixels -> key -> the
// encoder's rows through an engine job -> a prompt whose greedy output speculation leaves
// unchanged.
#include "multimodal/image_input.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encoders/gemma4v/encoder.h"
#include "engine/generator.h"
#include "media/media_test_util.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/target.h"
#include "multimodal/media_prompt.h"
#include "multimodal/multimodal_test_util.h"
#include "speculative/loaded_drafters.h"
#include "tokenizer/tokenizer.h"

namespace tandem {
namespace {

using testing_media::EncodeJpegRgb;
using testing_media::EncodePngRgb;
using testing_media::ExpectError;
using testing_media::MakeTestPicture;
using testing_multimodal::Models;

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
  const auto& m = Models();
  ImageInput input(*m.vision, SmallImages());
  std::vector<int32_t> tokens = m.tokenizer->Encode("Look: <|image|> and <|image|> then say");
  std::vector<MediaList> lists(1);
  lists[0].markup = FindImageTokens(*m.tokenizer);
  lists[0].items = {input.ToMedia(input.Prepare(EncodePngRgb(MakeTestPicture(144, 96, 3)), "")),
                    input.ToMedia(input.Prepare(EncodePngRgb(MakeTestPicture(96, 144, 4)), ""))};
  EngineRequest request;
  ExpandMedia(tokens, std::move(lists), request);
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
