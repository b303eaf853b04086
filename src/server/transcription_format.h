// The bodies of OpenAI's /v1/audio/transcriptions and /v1/audio/translations responses, one per
// `response_format`: json, text, verbose_json, srt and vtt, made from a transcription result.
//
// The shapes are OpenAI's (the openai npm package's Transcription, TranscriptionVerbose and
// Translation types, and the bodies OpenAI's service answers with):
//  - json: {"text": ...}, with usage {"type": "duration", "seconds": S} on transcriptions, S
//    the audio's duration rounded up to whole seconds;
//  - text: the text and a newline, as text/plain;
//  - verbose_json: {"task": "transcribe" | "translate", "language", "duration", "text",
//    "segments": [...]} (and usage on transcriptions); `language` is the language's lower-case
//    English name as OpenAI writes it ("english"), always "english" for a translation;
//  - srt: numbered cues from 1, "HH:MM:SS,mmm --> HH:MM:SS,mmm", the segment's text, a blank
//    line; vtt: "WEBVTT", a blank line, then cues without numbers with "HH:MM:SS.mmm". Both as
//    text/plain (as OpenAI serves them). A cue's text is trimmed of surrounding spaces, its
//    blank lines dropped and "-->" written "->", so no text can end a cue or fake a timing line.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::server {

enum class TranscriptionFormat { kJson, kText, kVerboseJson, kSrt, kVtt };

// "json", "text", "verbose_json", "srt", "vtt".
const char* TranscriptionFormatName(TranscriptionFormat format);
// The format a response_format value names, or nullopt (exact, lower case).
std::optional<TranscriptionFormat> TranscriptionFormatFromName(std::string_view name);

// One segment in verbose_json's field names. What tandem's model does not give is a placeholder
// the caller may fill: `seek` (Whisper's offset, in 10 ms frames, of the window the segment was
// decoded in: the caller's chunk start, 0 for one window), `avg_logprob` (the mean log
// probability of the segment's tokens, if the caller has them), `compression_ratio` (Whisper's
// gzip ratio of the text, a repetition check tandem does not run) and `no_speech_prob` (Whisper's
// no-speech token, which Gemma 4 has not); each is 0 unless set.
struct TranscriptionSegment {
  int64_t id = 0;
  int64_t seek = 0;
  double start = 0.0;  // seconds from the start of the audio
  double end = 0.0;
  std::string text;
  std::vector<int32_t> tokens;  // the segment's token ids (tandem's vocabulary, not Whisper's)
  double temperature = 0.0;     // the sampling temperature used
  double avg_logprob = 0.0;
  double compression_ratio = 0.0;
  double no_speech_prob = 0.0;
};

struct TranscriptionResult {
  std::string text;       // the whole transcript (or translation)
  std::string language;   // the audio's ISO-639-1 code (lower case); "" when unknown
  double duration = 0.0;  // seconds of audio
  std::vector<TranscriptionSegment> segments;  // in order; srt and vtt have one cue each
};

struct TranscriptionBody {
  std::string content_type;  // "application/json" or "text/plain; charset=utf-8"
  std::string body;
};

// The response body of `result` in `format`; `translate`: a /v1/audio/translations response.
// Invalid UTF-8 in texts becomes U+FFFD in JSON formats and is passed through in the others.
TranscriptionBody RenderTranscription(const TranscriptionResult& result, TranscriptionFormat format,
                                      bool translate);

// A subtitle timestamp: hours (two digits or more), minutes, seconds, `decimal_mark` (',' for
// SRT, '.' for WebVTT) and milliseconds, rounded to the nearest millisecond; negative or
// non-finite seconds are 0.
std::string SubtitleTimestamp(double seconds, char decimal_mark);

}  // namespace tandem::server
