// The audio path end to end on tiny random models: bytes -> log-mel pieces -> key -> the
// encoder's rows through an engine job -> a prompt whose greedy output speculation leaves
// unchanged, and whose audio rows are causal even where images attend both ways.
#include "multimodal/audio_input.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "base/thread_pool.h"
#include "engine/generator.h"
#include "media/audio_test_util.h"
#include "media/media_test_util.h"
#include "multimodal/media_prompt.h"
#include "multimodal/multimodal_test_util.h"
#include "speculative/loaded_drafters.h"

namespace tandem {
namespace {

using testing_media::AudioEncoding;
using testing_media::EncodeAudio;
using testing_media::ExpectError;
using testing_media::MakeTestSignal;
using testing_multimodal::Models;

// `seconds` of a test signal at 16 kHz as a WAV file.
std::vector<uint8_t> Wav(double seconds, uint32_t seed, int rate = 16000) {
  const double hz[] = {220.0, 660.0, 1800.0};
  const auto samples = MakeTestSignal(static_cast<size_t>(seconds * rate), rate, hz, 0.5, seed);
  return EncodeAudio(samples, 1, rate, AudioEncoding::kWavPcm16);
}

TEST(AudioInput, BytesBecomeTheEncodersRowsOnceAndThenComeFromTheCache) {
  AudioInput input(*Models().audio, {});
  const auto wav = Wav(1.0, 1);
  const PreparedAudio audio = input.Prepare(wav, "wav");
  EXPECT_EQ(audio.tokens, 25);  // 99 frames, one token per 40 ms
  EXPECT_NEAR(audio.seconds, 1.0, 1e-9);
  PromptMedia media = input.ToMedia(audio);
  EXPECT_TRUE(media.audio);
  ASSERT_TRUE(media.job);
  ThreadPool pool(2);
  int steps = 1;
  while (!media.job->Step(pool)) ++steps;
  EXPECT_EQ(steps, Models().audio->config().n_layer + 2);
  const auto rows = media.job->Result();
  const LogMel& mel = audio.features->chunks.at(0);
  const Gemma4AudioEncoder::Mel piece{mel.values.data(), mel.frames};
  EXPECT_EQ(*rows, Models().audio->Encode({&piece, 1}, pool));
  // Other samples are another key; the same bytes again are served whole.
  EXPECT_NE(input.Prepare(Wav(1.0, 2), "").key, audio.key);
  const PromptMedia again = input.ToMedia(input.Prepare(wav, "audio/wav"));
  EXPECT_FALSE(again.job);
  EXPECT_EQ(again.embeddings, rows);
  EXPECT_EQ(input.encodes(), 1u);
}

TEST(AudioInput, LongRecordingsAreEncodedIn30SecondPieces) {
  AudioInput input(*Models().audio, {});
  const PreparedAudio audio = input.Prepare(Wav(31.0, 3, 8000), "");
  ASSERT_EQ(audio.features->chunks.size(), 2u);
  EXPECT_EQ(audio.tokens, 750 + Gemma4AudioEncoder::Tokens(audio.features->chunks[1].frames));
  PromptMedia media = input.ToMedia(audio);
  ThreadPool pool(2);
  int steps = 1;
  while (!media.job->Step(pool)) ++steps;
  EXPECT_EQ(steps, 2 * (Models().audio->config().n_layer + 2));
  EXPECT_EQ(media.job->Result()->size(), static_cast<size_t>(audio.tokens) * 128);
}

TEST(AudioInput, BadBytesAreRefusedSayingWhy) {
  AudioInput input(*Models().audio, {});
  const auto wav = Wav(0.5, 1);
  ExpectError([&] { input.Prepare(wav, "mp3"); }, ErrorKind::kInvalidArgument, "does not match");
  ExpectError(
      [&] {
        input.Prepare(std::vector<uint8_t>{1, 2, 3, 4}, "");
      },
      ErrorKind::kInvalidArgument, "not a WAV, FLAC, Ogg or MP3 file");
  std::vector<uint8_t> cut(wav.begin(), wav.begin() + 40);
  EXPECT_THROW(input.Prepare(cut, ""), Error);
  ExpectError([&] { input.CheckCount(9); }, ErrorKind::kInvalidArgument, "at most 8");
}

// Audio rows are causal: with the image rule "both ways" on every layer, the greedy output after
// a recording is what the causal rule gives, and speculation leaves it unchanged.
TEST(AudioInput, GreedyOutputAfterAudioIsCausalAndTheSameWithAndWithoutSpeculation) {
  const auto& m = Models();
  AudioInput input(*m.audio, {});
  std::vector<MediaList> lists(1);
  lists[0].markup = FindAudioTokens(*m.tokenizer);
  lists[0].noun = "recording";
  lists[0].items = {input.ToMedia(input.Prepare(Wav(0.6, 4), ""))};
  EngineRequest request;
  ExpandMedia(m.tokenizer->Encode("Listen: <|audio|> and say"), lists, request);
  ASSERT_EQ(request.media.size(), 1u);
  ThreadPool pool(2);
  auto run = [&](SpecType type, bool both_ways) {
    const Gemma4Model& target = both_ways ? *m.target_both_ways : *m.target;
    Generator gen(
        target,
        MakeDrafters({.target = target,
                      .assistant = both_ways ? m.assistant_both_ways.get() : m.assistant.get(),
                      .draft_model = nullptr,
                      .pool = pool}),
        pool, {.n_ctx = 256, .n_seq = 1, .max_batch = 8});
    GenerateParams p;
    p.n_predict = 24;
    p.sampling.temperature = 0;
    p.spec.type = type;
    p.spec.adaptive = false;
    p.spec.draft_max = 4;
    return gen.Generate(request.prompt, request.media, p, nullptr);
  };
  const GenerateResult plain = run(SpecType::kNone, false);
  const GenerateResult both = run(SpecType::kNone, true);
  EXPECT_EQ(both.tokens, plain.tokens);
  const GenerateResult mtp = run(SpecType::kMtp, true);
  EXPECT_EQ(mtp.tokens, plain.tokens);
  EXPECT_GT(mtp.spec.drafted, 0);
  EXPECT_EQ(run(SpecType::kChain, false).tokens, plain.tokens);
}

}  // namespace
}  // namespace tandem
