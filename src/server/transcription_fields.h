// The form fields of OpenAI's /v1/audio/transcriptions and /v1/audio/translations requests
// (multipart/form-data, multipart_form.h) checked and read into one TranscriptionRequest.
//
// Fields (text parts unless said; each at most once unless said):
//  - file: required, the audio (a file part; a text part is taken as the bytes it holds);
//  - model: optional, as on the other routes ("" means the loaded model);
//  - prompt: optional text;
//  - response_format: json (default), text, verbose_json, srt or vtt;
//  - temperature: a decimal number in [0, 1] (OpenAI's range), default 0. 0 means greedy
//    decoding: OpenAI's whisper-1 retries at higher temperatures from 0, tandem does not;
// transcriptions only:
//  - language: an ISO-639-1 code, two ASCII letters (stored lower-cased);
//  - stream: "true" or "false";
//  - timestamp_granularities[]: "segment", any number of times; "word" is refused (tandem has no
//    word timestamps).
// Any other field (OpenAI's include[], chunking_strategy, known_speaker_names[], ... or a field
// of transcriptions sent to translations) is refused naming it: a field tandem does not
// implement is never ignored. Text values must be valid UTF-8 and at most kMaxFormTextBytes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "server/multipart_form.h"
#include "server/transcription_format.h"

namespace tandem::server {

// Bytes of one text field at most (a prompt is a few hundred tokens).
inline constexpr size_t kMaxFormTextBytes = 64u << 10;

struct TranscriptionRequest {
  std::vector<uint8_t> file;  // the audio, copied out of the body
  std::string filename;       // the file part's filename; "" when it had none
  std::string content_type;   // the file part's Content-Type; "" when it had none
  std::string model;          // "" : the loaded model
  std::string prompt;         // "" : none
  std::string language;       // ISO-639-1, lower case; "" : not given
  double temperature = 0.0;
  TranscriptionFormat response_format = TranscriptionFormat::kJson;
  bool stream = false;
  bool translate = false;  // /v1/audio/translations: into English
};

// Reads `fields` (from ParseMultipartForm) as a transcription request, or a translation request
// when `translate`. Throws Error(kInvalidArgument) naming the field (and its part) for a missing
// file, an unknown or repeated field, a file where text is expected, and a value out of shape
// or range.
TranscriptionRequest ParseTranscriptionForm(std::span<const FormField> fields, bool translate);

}  // namespace tandem::server
