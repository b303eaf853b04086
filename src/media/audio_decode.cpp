#include "media/audio_decode.h"

#include <sndfile.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "base/error.h"

namespace tandem {
namespace {

// libsndfile's virtual I/O over a byte span (read only).
struct MemoryFile {
  std::span<const uint8_t> bytes;
  sf_count_t position = 0;
};

sf_count_t MemLength(void* user) {
  return sf_count_t(static_cast<MemoryFile*>(user)->bytes.size());
}

sf_count_t MemSeek(sf_count_t offset, int whence, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t size = sf_count_t(file->bytes.size());
  sf_count_t base = 0;
  if (whence == SEEK_CUR) base = file->position;
  if (whence == SEEK_END) base = size;
  if (offset < -base || offset > size - base) return -1;
  file->position = base + offset;
  return file->position;
}

sf_count_t MemRead(void* out, sf_count_t count, void* user) {
  auto* file = static_cast<MemoryFile*>(user);
  const sf_count_t size = sf_count_t(file->bytes.size());
  if (count <= 0 || file->position >= size) return 0;
  const sf_count_t n = std::min(count, size - file->position);
  std::memcpy(out, file->bytes.data() + file->position, size_t(n));
  file->position += n;
  return n;
}

sf_count_t MemWrite(const void*, sf_count_t, void*) {
  return 0;
}

sf_count_t MemTell(void* user) {
  return static_cast<MemoryFile*>(user)->position;
}

struct SndfileCloser {
  void operator()(SNDFILE* file) const { sf_close(file); }
};

uint32_t Le32(std::span<const uint8_t> bytes, size_t at) {
  return uint32_t(bytes[at]) | uint32_t(bytes[at + 1]) << 8 | uint32_t(bytes[at + 2]) << 16 |
         uint32_t(bytes[at + 3]) << 24;
}

// WAV codec tags libsndfile decodes: PCM, IEEE float, MS ADPCM, A-law, mu-law, IMA ADPCM, GSM 6.10,
// G.721 ADPCM, and WAVE_FORMAT_EXTENSIBLE (whose sub-format libsndfile checks itself).
bool KnownWavCodec(uint32_t tag) {
  for (uint32_t known :
       {0x0001u, 0x0003u, 0x0002u, 0x0006u, 0x0007u, 0x0011u, 0x0031u, 0x0040u, 0xfffeu}) {
    if (tag == known) return true;
  }
  return false;
}

// Walks the RIFF chunks up to the "data" chunk:
//  - a "fmt " chunk naming a codec libsndfile does not decode is refused as unsupported (it would
//    call the chunk malformed);
//  - libsndfile quietly shortens a WAV whose data chunk runs past the end of the file; tandem
//    refuses it instead, like a truncated image. A data size of 0 or 0xFFFFFFFF (written by
//    streaming encoders that never came back to fix the size) means "to the end of the file".
void CheckWavChunks(std::span<const uint8_t> bytes) {
  size_t at = 12;
  while (at + 8 <= bytes.size()) {
    const uint32_t size = Le32(bytes, at + 4);
    const size_t body = at + 8;
    if (std::memcmp(bytes.data() + at, "fmt ", 4) == 0 && size >= 2 && body + 2 <= bytes.size()) {
      const uint32_t tag = uint32_t(bytes[body]) | uint32_t(bytes[body + 1]) << 8;
      if (!KnownWavCodec(tag)) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%04x", unsigned(tag));
        Fail(ErrorKind::kUnsupported,
             std::string("WAV audio with codec tag ") + hex + " is not supported");
      }
    }
    if (std::memcmp(bytes.data() + at, "data", 4) == 0) {
      const size_t present = bytes.size() - body;
      if (size != 0 && size != 0xffffffffu && size > present) {
        Fail(ErrorKind::kCorrupt, "truncated WAV audio: the data chunk at offset " +
                                      std::to_string(at) + " declares " + std::to_string(size) +
                                      " bytes, " + std::to_string(present) + " are present");
      }
      return;
    }
    if (size > bytes.size() - body) break;  // libsndfile reports a broken chunk itself
    at = body + size + (size & 1);
  }
}

bool ContainerMatches(int sf_format, AudioFormat format) {
  switch (sf_format & SF_FORMAT_TYPEMASK) {
    case SF_FORMAT_WAV:
    case SF_FORMAT_WAVEX:
      return format == AudioFormat::kWav;
    case SF_FORMAT_FLAC:
      return format == AudioFormat::kFlac;
    case SF_FORMAT_OGG:
      return format == AudioFormat::kOgg;
    case SF_FORMAT_MPEG:
      return format == AudioFormat::kMp3;
    default:
      return false;
  }
}

}  // namespace

DecodedAudio DecodeAudio(std::span<const uint8_t> bytes, const AudioLimits& limits) {
  CheckAudioByteSize(bytes.size(), limits);
  DecodedAudio audio;
  audio.format = SniffAudioFormat(bytes);
  const std::string what = std::string(AudioFormatName(audio.format)) + " audio";
  if (audio.format == AudioFormat::kWav) CheckWavChunks(bytes);

  MemoryFile memory{bytes, 0};
  SF_VIRTUAL_IO io{MemLength, MemSeek, MemRead, MemWrite, MemTell};
  SF_INFO info{};
  std::unique_ptr<SNDFILE, SndfileCloser> file(sf_open_virtual(&io, SFM_READ, &info, &memory));
  if (!file) {
    const int code = sf_error(nullptr);
    const std::string message = sf_error_number(code);
    if (code == SF_ERR_UNSUPPORTED_ENCODING) {
      Fail(ErrorKind::kUnsupported, what + " uses an encoding that is not supported: " + message);
    }
    Fail(ErrorKind::kCorrupt, "corrupt " + what + ": " + message);
  }
  if (!ContainerMatches(info.format, audio.format)) {
    Fail(ErrorKind::kCorrupt, "corrupt " + what + ": the decoder reads it as another container");
  }
  // libsndfile says SF_COUNT_MAX when it cannot tell the length from the header.
  const bool length_known = info.frames >= 0 && info.frames != SF_COUNT_MAX;
  CheckAudioHeader(audio.format, info.channels, info.samplerate, length_known ? info.frames : -1,
                   limits);
  audio.sample_rate = info.samplerate;
  audio.channels = info.channels;
  const int64_t max_frames = MaxAudioFrames(info.samplerate, limits);
  if (length_known) audio.samples.reserve(size_t(info.frames));

  constexpr sf_count_t kBlockFrames = 4096;
  std::vector<float> block(size_t(kBlockFrames) * size_t(info.channels));
  while (true) {
    const sf_count_t got = sf_readf_float(file.get(), block.data(), kBlockFrames);
    if (got <= 0) break;
    if (int64_t(audio.samples.size()) + got > max_frames) {
      Fail(ErrorKind::kInvalidArgument,
           what + " is over the limit of " + std::to_string(limits.max_seconds) + " seconds");
    }
    for (sf_count_t i = 0; i < got; ++i) {
      const float* frame = block.data() + size_t(i) * size_t(info.channels);
      float sum = frame[0];
      for (int c = 1; c < info.channels; ++c) sum += frame[c];
      const float mono = info.channels == 1 ? sum : sum / float(info.channels);
      if (!std::isfinite(mono)) {
        Fail(ErrorKind::kCorrupt, "corrupt " + what + ": sample " +
                                      std::to_string(audio.samples.size()) +
                                      " is not a finite number");
      }
      // Float samples pass through as stored: one of a huge magnitude (finite, but far past any
      // recording's nominal +-1) would overflow the features' power spectrum to infinity.
      if (std::fabs(mono) > kMaxAudioSampleMagnitude) {
        char value[32];
        std::snprintf(value, sizeof value, "%g", double(mono));
        Fail(ErrorKind::kInvalidArgument,
             what + ": sample " + std::to_string(audio.samples.size()) + " is " + value +
                 ", beyond +-" + std::to_string(int(kMaxAudioSampleMagnitude)) +
                 " (float audio is nominally within +-1)");
      }
      audio.samples.push_back(mono);
    }
  }
  if (sf_error(file.get()) != SF_ERR_NO_ERROR) {
    Fail(ErrorKind::kCorrupt, "corrupt " + what + ": " + sf_strerror(file.get()));
  }
  // WAV and FLAC headers state the exact length; Ogg and MP3 lengths may be estimates.
  const bool exact_length = audio.format == AudioFormat::kWav || audio.format == AudioFormat::kFlac;
  if (exact_length && length_known && int64_t(audio.samples.size()) < info.frames) {
    Fail(ErrorKind::kCorrupt, "truncated " + what + ": the header says " +
                                  std::to_string(info.frames) + " samples per channel, " +
                                  std::to_string(audio.samples.size()) + " were decoded");
  }
  if (audio.samples.empty()) Fail(ErrorKind::kInvalidArgument, what + " holds no samples");
  return audio;
}

}  // namespace tandem
