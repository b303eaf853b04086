#include "media/audio_decode.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "base/error.h"
#include "media/audio_test_util.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::AudioEncoding;
using testing_media::ExpectError;

std::vector<int16_t> Ramp(size_t count, int channels) {
  std::vector<int16_t> samples(count * size_t(channels));
  for (size_t i = 0; i < samples.size(); ++i) {
    samples[i] = int16_t(int(i * 7919 % 65536) - 32768);
  }
  return samples;
}

TEST(DecodeAudio, HandWrittenMonoWavIsEachSampleOver32768) {
  const std::vector<int16_t> pcm = Ramp(1000, 1);
  DecodedAudio audio = DecodeAudio(testing_media::WavPcm16(pcm, 1, 22050));
  EXPECT_EQ(audio.format, AudioFormat::kWav);
  EXPECT_EQ(audio.sample_rate, 22050);
  EXPECT_EQ(audio.channels, 1);
  ASSERT_EQ(audio.samples.size(), pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) {
    ASSERT_EQ(audio.samples[i], float(pcm[i]) / 32768.0f) << i;
  }
}

TEST(DecodeAudio, ChannelsAreMixedToTheirMean) {
  const std::vector<int16_t> pcm = Ramp(500, 3);
  DecodedAudio audio = DecodeAudio(testing_media::WavPcm16(pcm, 3, 8000));
  EXPECT_EQ(audio.channels, 3);
  ASSERT_EQ(audio.samples.size(), 500u);
  for (size_t i = 0; i < 500; ++i) {
    const double mean = (pcm[3 * i] + pcm[3 * i + 1] + pcm[3 * i + 2]) / 3.0 / 32768.0;
    ASSERT_NEAR(audio.samples[i], mean, 1e-7) << i;
  }
}

// Every encoding libsndfile writes comes back: lossless ones sample for sample (to the format's
// precision), lossy ones as the same signal (close in energy, highly correlated).
TEST(DecodeAudio, ReadsEveryEncodingLibsndfileWrites) {
  const int rate = 16000;
  const double tones[] = {440.0, 1250.0, 3100.0};
  const std::vector<float> signal = testing_media::MakeTestSignal(rate, rate, tones, 0.5, 3);
  struct Case {
    AudioEncoding encoding;
    AudioFormat format;
    double max_error;  // per sample; negative: lossy, compare by correlation
  };
  const Case cases[] = {
      {AudioEncoding::kWavPcm16, AudioFormat::kWav, 1.0 / 32768},
      {AudioEncoding::kWavPcm24, AudioFormat::kWav, 1.0 / 8388608},
      {AudioEncoding::kWavPcm32, AudioFormat::kWav, 1e-7},
      {AudioEncoding::kWavFloat, AudioFormat::kWav, 0.0},
      {AudioEncoding::kFlac16, AudioFormat::kFlac, 1.0 / 32768},
      {AudioEncoding::kOggVorbis, AudioFormat::kOgg, -1},
      {AudioEncoding::kOggOpus, AudioFormat::kOgg, -1},
      {AudioEncoding::kMp3, AudioFormat::kMp3, -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing_media::AudioEncodingName(c.encoding));
    if (!testing_media::CanEncodeAudio(c.encoding)) {
      GTEST_LOG_(WARNING) << "this libsndfile cannot write "
                          << testing_media::AudioEncodingName(c.encoding)
                          << " (MP3 needs libsndfile built with LAME); not tested";
      continue;
    }
    const std::vector<uint8_t> file = testing_media::EncodeAudio(signal, 1, rate, c.encoding);
    DecodedAudio audio = DecodeAudio(file);
    EXPECT_EQ(audio.format, c.format);
    EXPECT_EQ(audio.sample_rate, rate);
    if (c.max_error >= 0) {
      ASSERT_EQ(audio.samples.size(), signal.size());
      for (size_t i = 0; i < signal.size(); ++i) {
        ASSERT_NEAR(audio.samples[i], signal[i], c.max_error) << i;
      }
      continue;
    }
    // Lossy: the length is within a frame's delay, and the best-aligned correlation is high.
    ASSERT_GT(audio.samples.size(), signal.size() * 9 / 10);
    ASSERT_LT(audio.samples.size(), signal.size() + 4096);
    double best = 0.0;
    for (int lag = 0; lag < 2400; ++lag) {
      double dot = 0, a2 = 0, b2 = 0;
      for (size_t i = 4000; i < 12000 && i + size_t(lag) < audio.samples.size(); ++i) {
        dot += double(signal[i]) * audio.samples[i + size_t(lag)];
        a2 += double(signal[i]) * signal[i];
        b2 += double(audio.samples[i + size_t(lag)]) * audio.samples[i + size_t(lag)];
      }
      best = std::max(best, dot / std::sqrt(a2 * b2));
    }
    EXPECT_GT(best, 0.95);
  }
}

TEST(DecodeAudio, StereoFlacAndFloatWavAreMixedDown) {
  const int rate = 44100;
  const double left_tone[] = {500.0};
  const std::vector<float> left = testing_media::MakeTestSignal(rate / 2, rate, left_tone, 0.4, 1);
  std::vector<float> interleaved;
  for (float v : left) {
    interleaved.push_back(v);
    interleaved.push_back(-v);  // the right channel cancels the left: the mix is silence
  }
  for (AudioEncoding encoding : {AudioEncoding::kFlac16, AudioEncoding::kWavFloat}) {
    DecodedAudio audio = DecodeAudio(testing_media::EncodeAudio(interleaved, 2, rate, encoding));
    EXPECT_EQ(audio.channels, 2);
    ASSERT_EQ(audio.samples.size(), left.size());
    for (float v : audio.samples) ASSERT_NEAR(v, 0.0f, 1.0 / 32768);
  }
}

TEST(DecodeAudio, EmptyAndNonAudioBytesAreTheCallersFault) {
  ExpectError([] { DecodeAudio({}); }, ErrorKind::kInvalidArgument,
              "audio file is empty (zero bytes)");
  const std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'};
  ExpectError([&] { DecodeAudio(text); }, ErrorKind::kInvalidArgument,
              "not a WAV, FLAC, Ogg or MP3 file");
}

TEST(DecodeAudio, AWavWithoutSamplesIsRefused) {
  ExpectError([] { DecodeAudio(testing_media::WavPcm16({}, 1, 16000)); },
              ErrorKind::kInvalidArgument, "WAV audio holds no samples");
}

TEST(DecodeAudio, TruncatedFilesAreCorrupt) {
  const std::vector<uint8_t> wav = testing_media::WavPcm16(Ramp(4000, 1), 1, 16000);
  ExpectError([&] { DecodeAudio(std::span(wav).first(wav.size() - 100)); }, ErrorKind::kCorrupt,
              "truncated WAV audio: the data chunk at offset 36 declares 8000 bytes, 7900 are "
              "present");
  const double tone[] = {700.0};
  const std::vector<uint8_t> flac = testing_media::EncodeAudio(
      testing_media::MakeTestSignal(16000, 16000, tone, 0.5, 2), 1, 16000, AudioEncoding::kFlac16);
  ExpectError([&] { DecodeAudio(std::span(flac).first(flac.size() / 2)); }, ErrorKind::kCorrupt,
              "FLAC audio");
  // Only the header survives.
  ExpectError([&] { DecodeAudio(std::span(wav).first(30)); }, ErrorKind::kCorrupt, "WAV audio");
}

TEST(DecodeAudio, AnUnknownWavCodecIsUnsupported) {
  std::vector<uint8_t> wav = testing_media::WavPcm16(Ramp(100, 1), 1, 16000);
  wav[20] = 0x34;  // the fmt chunk's codec tag: 0x1234
  wav[21] = 0x12;
  ExpectError([&] { DecodeAudio(wav); }, ErrorKind::kUnsupported,
              "WAV audio with codec tag 0x1234 is not supported");
}

TEST(DecodeAudio, GarbageAfterTheMagicIsCorrupt) {
  for (const char* magic : {"fLaC", "OggS", "ID3\x03"}) {
    std::vector<uint8_t> bytes(2000);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 131 + 17);
    std::memcpy(bytes.data(), magic, 4);
    try {
      DecodeAudio(bytes);
      ADD_FAILURE() << magic << ": garbage decoded";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::kCorrupt || e.kind() == ErrorKind::kInvalidArgument)
          << magic << ": " << e.what();
    }
  }
}

TEST(DecodeAudio, NonFiniteFloatSamplesAreCorrupt) {
  std::vector<float> samples(100, 0.25f);
  samples[42] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<uint8_t> wav =
      testing_media::EncodeAudio(samples, 1, 16000, AudioEncoding::kWavFloat);
  ExpectError([&] { DecodeAudio(wav); }, ErrorKind::kCorrupt,
              "corrupt WAV audio: sample 42 is not a finite number");
}

// Found by fuzz_audio_decode: a finite but huge float sample made the features infinite.
TEST(DecodeAudio, HugeFloatSamplesAreRefused) {
  std::vector<float> samples(100, 0.25f);
  samples[7] = 3e30f;
  const std::vector<uint8_t> wav =
      testing_media::EncodeAudio(samples, 1, 16000, AudioEncoding::kWavFloat);
  ExpectError([&] { DecodeAudio(wav); }, ErrorKind::kInvalidArgument, "WAV audio: sample 7 is ");
  samples[7] = -kMaxAudioSampleMagnitude;  // the bound itself is a sample
  EXPECT_EQ(DecodeAudio(testing_media::EncodeAudio(samples, 1, 16000, AudioEncoding::kWavFloat))
                .samples[7],
            -kMaxAudioSampleMagnitude);
}

TEST(DecodeAudio, LimitsAreCheckedFromTheHeader) {
  const std::vector<uint8_t> wav = testing_media::WavPcm16(Ramp(16000, 2), 2, 16000);
  AudioLimits limits;
  limits.max_bytes = wav.size() - 1;
  ExpectError([&] { DecodeAudio(wav, limits); }, ErrorKind::kInvalidArgument,
              "audio file of 64044 bytes is over the limit of 64043 bytes");
  limits = {};
  limits.max_seconds = 0.5;
  ExpectError([&] { DecodeAudio(wav, limits); }, ErrorKind::kInvalidArgument,
              "WAV audio of 1.000000 seconds is over the limit of 0.500000 seconds");
  limits = {};
  limits.max_channels = 1;
  ExpectError([&] { DecodeAudio(wav, limits); }, ErrorKind::kInvalidArgument,
              "WAV audio with 2 channels: supported are 1 to 1");
  limits = {};
  limits.min_sample_rate = 22050;
  ExpectError([&] { DecodeAudio(wav, limits); }, ErrorKind::kInvalidArgument,
              "WAV audio at 16000 Hz: supported are 22050 to 384000 Hz");
}

// Ogg and MP3 headers may not state the length exactly; the limit holds either from the header or
// while decoding.
TEST(DecodeAudio, LengthLimitHoldsForLossyFormats) {
  const double tone[] = {440.0};
  const std::vector<float> signal = testing_media::MakeTestSignal(32000, 16000, tone, 0.5, 4);
  AudioLimits limits;
  limits.max_seconds = 1.5;
  for (AudioEncoding encoding : {AudioEncoding::kOggVorbis, AudioEncoding::kMp3}) {
    if (!testing_media::CanEncodeAudio(encoding)) continue;
    const std::vector<uint8_t> file = testing_media::EncodeAudio(signal, 1, 16000, encoding);
    ExpectError([&] { DecodeAudio(file, limits); }, ErrorKind::kInvalidArgument,
                "over the limit of 1.500000 seconds");
  }
}

}  // namespace
}  // namespace tandem
