#include "media/audio_format.h"

#include <array>
#include <cstring>

#include "base/error.h"

namespace tandem {
namespace {

// The name without parameters or surrounding blanks, in lower case.
std::string BareName(std::string_view name) {
  size_t semicolon = name.find(';');
  if (semicolon != std::string_view::npos) name = name.substr(0, semicolon);
  while (!name.empty() && (name.front() == ' ' || name.front() == '\t')) name.remove_prefix(1);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.remove_suffix(1);
  std::string bare(name);
  for (char& c : bare) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return bare;
}

bool StartsWith(std::span<const uint8_t> bytes, size_t offset, const char* magic, size_t n) {
  return bytes.size() >= offset + n && std::memcmp(bytes.data() + offset, magic, n) == 0;
}

// An MPEG audio frame header (MPEG-1, 2 or 2.5, layer I, II or III): 11 sync bits, then a
// version other than the reserved 01, a layer other than the reserved 00 (00 is AAC's ADTS), a
// bitrate index other than 1111 and a sample-rate index other than 11.
bool IsMpegFrameHeader(std::span<const uint8_t> bytes) {
  if (bytes.size() < 4) return false;
  if (bytes[0] != 0xff || (bytes[1] & 0xe0) != 0xe0) return false;
  const int version = (bytes[1] >> 3) & 3;
  const int layer = (bytes[1] >> 1) & 3;
  const int bitrate = bytes[2] >> 4;
  const int rate = (bytes[2] >> 2) & 3;
  return version != 1 && layer != 0 && bitrate != 15 && rate != 3;
}

}  // namespace

const char* AudioFormatName(AudioFormat format) {
  switch (format) {
    case AudioFormat::kWav:
      return "WAV";
    case AudioFormat::kFlac:
      return "FLAC";
    case AudioFormat::kOgg:
      return "Ogg";
    case AudioFormat::kMp3:
      return "MP3";
  }
  return "unknown";
}

AudioFormat SniffAudioFormat(std::span<const uint8_t> bytes) {
  if (StartsWith(bytes, 0, "RIFF", 4) && StartsWith(bytes, 8, "WAVE", 4)) return AudioFormat::kWav;
  if (StartsWith(bytes, 0, "fLaC", 4)) return AudioFormat::kFlac;
  if (StartsWith(bytes, 0, "OggS", 4)) return AudioFormat::kOgg;
  if (StartsWith(bytes, 0, "ID3", 3) || IsMpegFrameHeader(bytes)) return AudioFormat::kMp3;
  Fail(ErrorKind::kInvalidArgument, "not a WAV, FLAC, Ogg or MP3 file");
}

std::optional<AudioFormat> AudioFormatForName(std::string_view name) {
  struct Entry {
    const char* name;
    AudioFormat format;
  };
  static constexpr std::array<Entry, 20> kNames = {{
      {"wav", AudioFormat::kWav},           {"wave", AudioFormat::kWav},
      {"audio/wav", AudioFormat::kWav},     {"audio/wave", AudioFormat::kWav},
      {"audio/x-wav", AudioFormat::kWav},   {"audio/vnd.wave", AudioFormat::kWav},
      {"flac", AudioFormat::kFlac},         {"audio/flac", AudioFormat::kFlac},
      {"audio/x-flac", AudioFormat::kFlac}, {"ogg", AudioFormat::kOgg},
      {"oga", AudioFormat::kOgg},           {"opus", AudioFormat::kOgg},
      {"audio/ogg", AudioFormat::kOgg},     {"audio/opus", AudioFormat::kOgg},
      {"mp3", AudioFormat::kMp3},           {"mpeg", AudioFormat::kMp3},
      {"audio/mpeg", AudioFormat::kMp3},    {"audio/mp3", AudioFormat::kMp3},
      {"audio/mpeg3", AudioFormat::kMp3},   {"audio/x-mpeg-3", AudioFormat::kMp3},
  }};
  const std::string bare = BareName(name);
  for (const Entry& entry : kNames) {
    if (bare == entry.name) return entry.format;
  }
  return std::nullopt;
}

void CheckClaimedAudioFormat(const std::string& claimed, AudioFormat sniffed) {
  const std::string bare = BareName(claimed);
  if (bare.empty()) Fail(ErrorKind::kInvalidArgument, "missing audio format");
  std::optional<AudioFormat> format = AudioFormatForName(bare);
  if (!format) {
    static constexpr std::array<const char*, 8> kOtherAudio = {"aac", "m4a",   "mp4",  "webm",
                                                               "pcm", "pcm16", "aiff", "wma"};
    bool other_audio = bare.rfind("audio/", 0) == 0;
    for (const char* name : kOtherAudio) other_audio = other_audio || bare == name;
    if (other_audio) {
      Fail(ErrorKind::kUnsupported,
           "audio format " + bare + " is not supported (wav, flac, ogg and mp3 are)");
    }
    Fail(ErrorKind::kInvalidArgument, "\"" + bare + "\" is not an audio format");
  }
  if (*format != sniffed) {
    Fail(ErrorKind::kInvalidArgument,
         "audio format " + bare + " does not match the " + AudioFormatName(sniffed) + " data");
  }
}

}  // namespace tandem
