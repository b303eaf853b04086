// The transcription and translation form fields: what the openai npm package sends (the
// fuzz_multipart seeds it wrote) is read as sent; every field tandem does not implement, every
// repeat and every value out of shape is refused, naming the field.
#include "server/transcription_fields.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace tandem::server {
namespace {

const std::string kClip("RIFF\x24\x00\x00\x00WAVE\r\n--\r\n\x00\xff\r\n", 22);

// A form written by hand: each field {name, value, filename}.
struct Spec {
  std::string name;
  std::string value;
  std::optional<std::string> filename = std::nullopt;
};

struct Built {
  std::string body;
  std::vector<FormField> fields;
};

std::unique_ptr<Built> Build(const std::vector<Spec>& specs) {
  auto built = std::make_unique<Built>();
  for (const Spec& s : specs) {
    built->body += "--B\r\nContent-Disposition: form-data; name=\"" + s.name + "\"";
    if (s.filename) built->body += "; filename=\"" + *s.filename + "\"";
    built->body += "\r\n\r\n" + s.value + "\r\n";
  }
  built->body += "--B--\r\n";
  built->fields = ParseMultipartForm("multipart/form-data; boundary=B", built->body);
  return built;
}

TranscriptionRequest Parse(const std::vector<Spec>& specs, bool translate = false) {
  return ParseTranscriptionForm(Build(specs)->fields, translate);
}

std::string ErrorOf(const std::vector<Spec>& specs, bool translate = false) {
  try {
    Parse(specs, translate);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

const Spec kFile{"file", kClip, "a.wav"};

TranscriptionRequest ParseSeed(const std::string& name, bool translate) {
  std::ifstream in(
      std::filesystem::path(TANDEM_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_multipart" / name,
      std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  const std::string bytes = s.str();
  const size_t eol = bytes.find('\n');
  const std::string body = bytes.substr(eol + 1);
  return ParseTranscriptionForm(ParseMultipartForm(bytes.substr(0, eol), body), translate);
}

TEST(TranscriptionFields, WhatTheOpenAiPackageSends) {
  TranscriptionRequest r = ParseSeed("openai_form_data.form", false);
  EXPECT_EQ(r.file, std::vector<uint8_t>(kClip.begin(), kClip.end()));
  EXPECT_EQ(r.filename, "clip.wav");
  EXPECT_EQ(r.content_type, "audio/wav");
  EXPECT_EQ(r.model, "whisper-1");
  EXPECT_EQ(r.language, "en");
  EXPECT_EQ(r.temperature, 0.2);
  EXPECT_EQ(r.response_format, TranscriptionFormat::kVerboseJson);
  EXPECT_EQ(r.prompt, "Hi \"there\"\r\nnew line");
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.translate);

  r = ParseSeed("openai_streaming.form", false);
  EXPECT_EQ(r.content_type, "application/octet-stream");
  EXPECT_EQ(r.response_format, TranscriptionFormat::kSrt);
  EXPECT_EQ(r.prompt, "a\nb");

  r = ParseSeed("openai_translation.form", true);
  EXPECT_TRUE(r.translate);
  EXPECT_EQ(r.filename, "clip.mp3");
  EXPECT_EQ(r.response_format, TranscriptionFormat::kText);
  EXPECT_EQ(r.temperature, 0.0);

  // curl's seed has a second file field, which no route has.
  try {
    ParseSeed("curl.form", false);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "extra (part 5): not a field tandem implements for /v1/audio/transcriptions; "
                 "remove it");
  }
}

TEST(TranscriptionFields, Defaults) {
  const TranscriptionRequest r = Parse({kFile});
  EXPECT_EQ(r.model, "");
  EXPECT_EQ(r.prompt, "");
  EXPECT_EQ(r.language, "");
  EXPECT_EQ(r.temperature, 0.0);
  EXPECT_EQ(r.response_format, TranscriptionFormat::kJson);
  EXPECT_FALSE(r.stream);
  // A file sent as a text part (curl -F 'file=<x') is its bytes, without a filename.
  const TranscriptionRequest t = Parse({{"file", "abc"}});
  EXPECT_EQ(t.file, (std::vector<uint8_t>{'a', 'b', 'c'}));
  EXPECT_EQ(t.filename, "");
}

TEST(TranscriptionFields, Values) {
  EXPECT_EQ(Parse({kFile, {"language", "DE"}}).language, "de");
  EXPECT_EQ(Parse({kFile, {"temperature", "1"}}).temperature, 1.0);
  EXPECT_EQ(Parse({kFile, {"temperature", "0.75"}}).temperature, 0.75);
  EXPECT_EQ(Parse({kFile, {"temperature", "5e-1"}}).temperature, 0.5);
  EXPECT_TRUE(Parse({kFile, {"stream", "true"}}).stream);
  EXPECT_FALSE(Parse({kFile, {"stream", "false"}}).stream);
  for (const char* f : {"json", "text", "verbose_json", "srt", "vtt"}) {
    EXPECT_STREQ(TranscriptionFormatName(Parse({kFile, {"response_format", f}}).response_format),
                 f);
  }
  const TranscriptionRequest r = Parse(
      {{"timestamp_granularities[]", "segment"}, kFile, {"timestamp_granularities[]", "segment"}});
  EXPECT_EQ(r.filename, "a.wav");
}

TEST(TranscriptionFields, RefusedValuesNameTheField) {
  EXPECT_EQ(ErrorOf({{"model", "m"}}), "file is required (the audio, as a file part)");
  EXPECT_EQ(ErrorOf({kFile, {"language", "eng"}}),
            "language (part 1): 'eng' is not an ISO-639-1 code (two letters, e.g. en)");
  EXPECT_NE(ErrorOf({kFile, {"language", "e1"}}).find("ISO-639-1"), std::string::npos);
  EXPECT_NE(ErrorOf({kFile, {"language", ""}}).find("ISO-639-1"), std::string::npos);
  EXPECT_EQ(ErrorOf({kFile, {"temperature", "1.5"}}),
            "temperature (part 1): '1.5' is outside [0, 1]");
  EXPECT_EQ(ErrorOf({kFile, {"temperature", "-0.1"}}),
            "temperature (part 1): '-0.1' is outside [0, 1]");
  for (const char* bad : {"", "x", "0.5x", " 0.5", "nan", "inf", "+0.5", "0,5"}) {
    EXPECT_NE(ErrorOf({kFile, {"temperature", bad}}).find("is not a number"), std::string::npos)
        << bad;
  }
  EXPECT_EQ(ErrorOf({kFile, {"stream", "True"}}),
            "stream (part 1): 'True': expected true or false");
  EXPECT_EQ(ErrorOf({kFile, {"response_format", "diarized_json"}}),
            "response_format (part 1): 'diarized_json' is not one of json, text, verbose_json, "
            "srt, vtt");
  EXPECT_EQ(
      ErrorOf(
          {kFile, {"timestamp_granularities[]", "segment"}, {"timestamp_granularities[]", "word"}}),
      "timestamp_granularities[] (part 2): 'word' is not supported: tandem gives segment "
      "timestamps only (use segment)");
  EXPECT_NE(ErrorOf({kFile, {"timestamp_granularities[]", "line"}}).find("'line' is not one of"),
            std::string::npos);
}

TEST(TranscriptionFields, RefusedFieldsAreNamed) {
  EXPECT_EQ(ErrorOf({kFile, {"include[]", "logprobs"}}),
            "include[] (part 1): not a field tandem implements for /v1/audio/transcriptions; "
            "remove it");
  for (const char* name : {"chunking_strategy", "chunking_strategy[type]", "known_speaker_names[]",
                           "timestamp_granularities", "Model", "n"}) {
    EXPECT_NE(ErrorOf({kFile, {name, "x"}}).find(std::string(name) + " (part 1): not a field"),
              std::string::npos)
        << name;
  }
  // Translations have file, model, prompt, response_format and temperature only.
  for (const char* name : {"language", "stream", "timestamp_granularities[]"}) {
    EXPECT_EQ(ErrorOf({kFile, {name, "en"}}, true),
              std::string(name) +
                  " (part 1): not a field tandem implements for /v1/audio/translations; remove it");
  }
  EXPECT_EQ(Parse({kFile, {"prompt", "p"}, {"temperature", "0.5"}}, true).prompt, "p");
}

TEST(TranscriptionFields, RepeatsFilesAndTextAreChecked) {
  EXPECT_EQ(ErrorOf({kFile, {"model", "a"}, {"model", "b"}}), "model: given twice (parts 1 and 2)");
  EXPECT_EQ(ErrorOf({kFile, kFile}), "file: given twice (parts 0 and 1)");
  EXPECT_EQ(ErrorOf({kFile, {"prompt", "x", "p.txt"}}),
            "prompt (part 1): expected a text field, got a file (filename 'p.txt')");
  EXPECT_EQ(ErrorOf({kFile, {"prompt", "\xff"}}), "prompt (part 1): the value is not valid UTF-8");
  EXPECT_EQ(Parse({kFile, {"prompt", std::string(kMaxFormTextBytes, 'a')}}).prompt.size(),
            kMaxFormTextBytes);
  EXPECT_NE(ErrorOf({kFile, {"prompt", std::string(kMaxFormTextBytes + 1, 'a')}})
                .find("a value of 65537 bytes"),
            std::string::npos);
}

}  // namespace
}  // namespace tandem::server
