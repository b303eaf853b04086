// Which audio container a byte string holds, told by its magic bytes, and whether a format
// claimed for it (OpenAI's input_audio `format`, a data URL's or a form part's media type) agrees.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tandem {

enum class AudioFormat { kWav, kFlac, kOgg, kMp3 };

// "WAV", "FLAC", "Ogg", "MP3": for messages.
const char* AudioFormatName(AudioFormat format);

// WAV ("RIFF" <size> "WAVE"), FLAC ("fLaC"), Ogg ("OggS": Vorbis or Opus inside), MP3 (an ID3v2
// tag, or an MPEG audio frame header: 11 sync bits, a valid version, layer, bitrate and sample
// rate). Anything else, including too few bytes to tell, throws Error(kInvalidArgument)
// "not a WAV, FLAC, Ogg or MP3 file".
AudioFormat SniffAudioFormat(std::span<const uint8_t> bytes);

// The format a name or media type names, or nullopt. Case-insensitive, parameters after ';'
// ignored. Names as OpenAI's input_audio `format` and file extensions: "wav", "wave", "flac",
// "ogg", "oga", "opus", "mp3", "mpeg"; media types: audio/wav, audio/wave, audio/x-wav,
// audio/vnd.wave, audio/flac, audio/x-flac, audio/ogg, audio/opus, audio/mpeg, audio/mp3,
// audio/mpeg3, audio/x-mpeg-3.
std::optional<AudioFormat> AudioFormatForName(std::string_view name);

// Throws unless `claimed` names the format the bytes were sniffed as:
//  - an empty claim: Error(kInvalidArgument) "missing audio format";
//  - an audio format tandem does not decode ("aac", "m4a", "webm", "pcm16", any other audio/*
//    type): Error(kUnsupported);
//  - anything else unknown: Error(kInvalidArgument) "... is not an audio format";
//  - a known format that disagrees with the bytes: Error(kInvalidArgument)
//    "audio format mp3 does not match the WAV data".
void CheckClaimedAudioFormat(const std::string& claimed, AudioFormat sniffed);

}  // namespace tandem
