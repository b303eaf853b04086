#include "media/audio_test_util.h"

#include <gtest/gtest.h>
#include <sndfile.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <numbers>

namespace tandem::testing_media {
namespace {

void PutTag(std::vector<uint8_t>& out, const char* tag) {
  for (int i = 0; i < 4; ++i) out.push_back(uint8_t(tag[i]));
}

void PutLe(std::vector<uint8_t>& out, uint32_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(uint8_t(value >> (8 * i)));
}

// libsndfile's virtual I/O over a growing buffer.
struct Buffer {
  std::vector<uint8_t> bytes;
  sf_count_t position = 0;
};

sf_count_t BufLength(void* user) {
  return sf_count_t(static_cast<Buffer*>(user)->bytes.size());
}
sf_count_t BufSeek(sf_count_t offset, int whence, void* user) {
  auto* b = static_cast<Buffer*>(user);
  sf_count_t base = whence == SEEK_CUR   ? b->position
                    : whence == SEEK_END ? sf_count_t(b->bytes.size())
                                         : 0;
  if (base + offset < 0) return -1;
  b->position = base + offset;
  return b->position;
}
sf_count_t BufRead(void* out, sf_count_t count, void* user) {
  auto* b = static_cast<Buffer*>(user);
  const sf_count_t size = sf_count_t(b->bytes.size());
  if (b->position >= size) return 0;
  const sf_count_t n = std::min(count, size - b->position);
  std::memcpy(out, b->bytes.data() + b->position, size_t(n));
  b->position += n;
  return n;
}
sf_count_t BufWrite(const void* data, sf_count_t count, void* user) {
  auto* b = static_cast<Buffer*>(user);
  if (size_t(b->position + count) > b->bytes.size()) b->bytes.resize(size_t(b->position + count));
  std::memcpy(b->bytes.data() + b->position, data, size_t(count));
  b->position += count;
  return count;
}
sf_count_t BufTell(void* user) {
  return static_cast<Buffer*>(user)->position;
}

int SndfileFormat(AudioEncoding encoding) {
  switch (encoding) {
    case AudioEncoding::kWavPcm16:
      return SF_FORMAT_WAV | SF_FORMAT_PCM_16;
    case AudioEncoding::kWavPcm24:
      return SF_FORMAT_WAV | SF_FORMAT_PCM_24;
    case AudioEncoding::kWavPcm32:
      return SF_FORMAT_WAV | SF_FORMAT_PCM_32;
    case AudioEncoding::kWavFloat:
      return SF_FORMAT_WAV | SF_FORMAT_FLOAT;
    case AudioEncoding::kFlac16:
      return SF_FORMAT_FLAC | SF_FORMAT_PCM_16;
    case AudioEncoding::kOggVorbis:
      return SF_FORMAT_OGG | SF_FORMAT_VORBIS;
    case AudioEncoding::kOggOpus:
      return SF_FORMAT_OGG | SF_FORMAT_OPUS;
    case AudioEncoding::kMp3:
      return SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III;
  }
  return 0;
}

}  // namespace

std::vector<uint8_t> WavPcm16(std::span<const int16_t> interleaved, int channels, int sample_rate) {
  const uint32_t data_bytes = uint32_t(interleaved.size() * 2);
  std::vector<uint8_t> out;
  PutTag(out, "RIFF");
  PutLe(out, 36 + data_bytes, 4);
  PutTag(out, "WAVE");
  PutTag(out, "fmt ");
  PutLe(out, 16, 4);
  PutLe(out, 1, 2);  // PCM
  PutLe(out, uint32_t(channels), 2);
  PutLe(out, uint32_t(sample_rate), 4);
  PutLe(out, uint32_t(sample_rate * channels * 2), 4);
  PutLe(out, uint32_t(channels * 2), 2);
  PutLe(out, 16, 2);
  PutTag(out, "data");
  PutLe(out, data_bytes, 4);
  for (int16_t s : interleaved) PutLe(out, uint16_t(s), 2);
  return out;
}

const char* AudioEncodingName(AudioEncoding encoding) {
  switch (encoding) {
    case AudioEncoding::kWavPcm16:
      return "WAV PCM 16";
    case AudioEncoding::kWavPcm24:
      return "WAV PCM 24";
    case AudioEncoding::kWavPcm32:
      return "WAV PCM 32";
    case AudioEncoding::kWavFloat:
      return "WAV float";
    case AudioEncoding::kFlac16:
      return "FLAC 16";
    case AudioEncoding::kOggVorbis:
      return "Ogg Vorbis";
    case AudioEncoding::kOggOpus:
      return "Ogg Opus";
    case AudioEncoding::kMp3:
      return "MP3";
  }
  return "?";
}

bool CanEncodeAudio(AudioEncoding encoding) {
  SF_INFO info{};
  info.samplerate = 16000;
  info.channels = 1;
  info.format = SndfileFormat(encoding);
  return sf_format_check(&info) != 0;
}

std::vector<uint8_t> EncodeAudio(std::span<const float> interleaved, int channels, int sample_rate,
                                 AudioEncoding encoding) {
  Buffer buffer;
  SF_VIRTUAL_IO io{BufLength, BufSeek, BufRead, BufWrite, BufTell};
  SF_INFO info{};
  info.samplerate = sample_rate;
  info.channels = channels;
  info.format = SndfileFormat(encoding);
  SNDFILE* file = sf_open_virtual(&io, SFM_WRITE, &info, &buffer);
  if (!file) {
    ADD_FAILURE() << "libsndfile cannot write " << AudioEncodingName(encoding) << ": "
                  << sf_strerror(nullptr);
    return {};
  }
  const sf_count_t frames = sf_count_t(interleaved.size()) / channels;
  EXPECT_EQ(sf_writef_float(file, interleaved.data(), frames), frames);
  sf_close(file);
  return buffer.bytes;
}

std::vector<float> MakeTestSignal(size_t count, int sample_rate, std::span<const double> hertz,
                                  double amplitude, uint32_t seed) {
  std::vector<float> out(count);
  uint32_t state = seed * 2654435761u + 1;
  const double each = hertz.empty() ? 0.0 : amplitude / double(hertz.size());
  for (size_t i = 0; i < count; ++i) {
    const double t = double(i) / sample_rate;
    double value = 0.0;
    for (double f : hertz) value += each * std::sin(2.0 * std::numbers::pi * f * t);
    value *= 0.75 + 0.25 * std::sin(2.0 * std::numbers::pi * 1.5 * t);
    state = state * 1664525u + 1013904223u;
    value += 0.002 * (double(state >> 8) / double(1u << 24) - 0.5);
    out[i] = float(value);
  }
  return out;
}

void WriteFile(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

}  // namespace tandem::testing_media
