#include "media/audio_format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "media/media_test_util.h"

namespace tandem {
namespace {

using testing_media::ExpectError;

std::vector<uint8_t> Bytes(const std::string& s) {
  return {s.begin(), s.end()};
}

TEST(SniffAudioFormat, KnowsTheFourContainers) {
  EXPECT_EQ(SniffAudioFormat(Bytes(std::string("RIFF\x24\0\0\0WAVEfmt ", 16))), AudioFormat::kWav);
  EXPECT_EQ(SniffAudioFormat(Bytes("fLaC\x00")), AudioFormat::kFlac);
  EXPECT_EQ(SniffAudioFormat(Bytes("OggS\x00\x02")), AudioFormat::kOgg);
  EXPECT_EQ(SniffAudioFormat(Bytes("ID3\x04\x00")), AudioFormat::kMp3);
  // MPEG-1 layer III, 128 kbit/s, 44.1 kHz; MPEG-2 layer III at 16 kHz.
  EXPECT_EQ(SniffAudioFormat(std::vector<uint8_t>{0xff, 0xfb, 0x90, 0x64}), AudioFormat::kMp3);
  EXPECT_EQ(SniffAudioFormat(std::vector<uint8_t>{0xff, 0xf3, 0x88, 0xc4}), AudioFormat::kMp3);
}

TEST(SniffAudioFormat, RefusesEverythingElse) {
  const std::vector<std::vector<uint8_t>> others = {
      {},
      Bytes("RIFF\x24\0\0\0WEBPVP8 "),  // a WebP picture
      Bytes("FORM\0\0\0\x20"
            "AIFFCOMM"),         // AIFF: libsndfile reads it, tandem not
      {0xff, 0xf1, 0x50, 0x80},  // AAC ADTS (layer bits 00)
      {0xff, 0xfb, 0xf0, 0x64},  // bitrate index 1111
      {0xff, 0xfb, 0x9c, 0x64},  // sample-rate index 11
      {0xff, 0xeb, 0x90, 0x64},  // reserved MPEG version 01
      Bytes("fLa"),              // too short to tell
      {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'},
  };
  for (const auto& bytes : others) {
    ExpectError([&] { SniffAudioFormat(bytes); }, ErrorKind::kInvalidArgument,
                "not a WAV, FLAC, Ogg or MP3 file");
  }
}

TEST(AudioFormatForName, KnowsNamesAndMediaTypes) {
  EXPECT_EQ(AudioFormatForName("wav"), AudioFormat::kWav);
  EXPECT_EQ(AudioFormatForName(" Audio/X-WAV ; codecs=1"), AudioFormat::kWav);
  EXPECT_EQ(AudioFormatForName("MP3"), AudioFormat::kMp3);
  EXPECT_EQ(AudioFormatForName("audio/mpeg"), AudioFormat::kMp3);
  EXPECT_EQ(AudioFormatForName("flac"), AudioFormat::kFlac);
  EXPECT_EQ(AudioFormatForName("audio/ogg"), AudioFormat::kOgg);
  EXPECT_EQ(AudioFormatForName("opus"), AudioFormat::kOgg);
  EXPECT_FALSE(AudioFormatForName("aac"));
  EXPECT_FALSE(AudioFormatForName("image/png"));
  EXPECT_FALSE(AudioFormatForName(""));
}

TEST(CheckClaimedAudioFormat, AcceptsAMatchingClaim) {
  CheckClaimedAudioFormat("wav", AudioFormat::kWav);
  CheckClaimedAudioFormat("audio/mpeg", AudioFormat::kMp3);
  CheckClaimedAudioFormat("FLAC", AudioFormat::kFlac);
  CheckClaimedAudioFormat("ogg", AudioFormat::kOgg);
}

TEST(CheckClaimedAudioFormat, RefusesLyingUnknownAndMissingClaims) {
  ExpectError([] { CheckClaimedAudioFormat("mp3", AudioFormat::kWav); },
              ErrorKind::kInvalidArgument, "audio format mp3 does not match the WAV data");
  ExpectError([] { CheckClaimedAudioFormat("wav", AudioFormat::kFlac); },
              ErrorKind::kInvalidArgument, "does not match the FLAC data");
  ExpectError([] { CheckClaimedAudioFormat("aac", AudioFormat::kMp3); }, ErrorKind::kUnsupported,
              "audio format aac is not supported");
  ExpectError([] { CheckClaimedAudioFormat("audio/webm", AudioFormat::kOgg); },
              ErrorKind::kUnsupported, "is not supported");
  ExpectError([] { CheckClaimedAudioFormat("image/png", AudioFormat::kWav); },
              ErrorKind::kInvalidArgument, "\"image/png\" is not an audio format");
  ExpectError([] { CheckClaimedAudioFormat("  ", AudioFormat::kWav); }, ErrorKind::kInvalidArgument,
              "missing audio format");
}

}  // namespace
}  // namespace tandem
