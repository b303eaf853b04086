// OpenAI's transcription and translation form fields.
#include "server/transcription_fields.h"

#include <charconv>
#include <cmath>
#include <map>

#include "base/error.h"
#include "tokenizer/utf8.h"

namespace tandem::server {
namespace {

constexpr const char* kGranularities = "timestamp_granularities[]";

// "name (part N)": where a field's message points.
std::string Where(const FormField& f) {
  return f.name + " (part " + std::to_string(f.index) + ")";
}

[[noreturn]] void Invalid(const FormField& f, const std::string& what) {
  Fail(ErrorKind::kInvalidArgument, Where(f) + ": " + what);
}

// A text field's value: not a file part, valid UTF-8, within kMaxFormTextBytes.
std::string Text(const FormField& f) {
  if (f.filename) {
    Invalid(f, "expected a text field, got a file (filename '" + f.filename->substr(0, 64) + "')");
  }
  if (f.bytes.size() > kMaxFormTextBytes) {
    Invalid(f, "a value of " + std::to_string(f.bytes.size()) + " bytes (the limit is " +
                   std::to_string(kMaxFormTextBytes) + ")");
  }
  if (!IsValidUtf8(f.bytes)) Invalid(f, "the value is not valid UTF-8");
  return std::string(f.bytes);
}

// The value in quotes for a message, cut short.
std::string Quoted(const std::string& value) {
  std::string out(1, '\'');
  out.append(value, 0, 32);
  out.append(value.size() > 32 ? "...'" : "'");
  return out;
}

double Temperature(const FormField& f) {
  const std::string text = Text(f);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    Invalid(f, Quoted(text) + " is not a number");
  }
  if (value < 0.0 || value > 1.0) Invalid(f, Quoted(text) + " is outside [0, 1]");
  return value;
}

std::string Language(const FormField& f) {
  std::string text = Text(f);
  const auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (text.size() != 2 || !letter(text[0]) || !letter(text[1])) {
    Invalid(f, Quoted(text) + " is not an ISO-639-1 code (two letters, e.g. en)");
  }
  for (char& c : text) c = char(c | 0x20);
  return text;
}

bool Stream(const FormField& f) {
  const std::string text = Text(f);
  if (text == "true") return true;
  if (text == "false") return false;
  Invalid(f, Quoted(text) + ": expected true or false");
}

TranscriptionFormat ResponseFormat(const FormField& f) {
  const std::string text = Text(f);
  if (auto format = TranscriptionFormatFromName(text)) return *format;
  Invalid(f, Quoted(text) + " is not one of json, text, verbose_json, srt, vtt");
}

void Granularity(const FormField& f) {
  const std::string text = Text(f);
  if (text == "segment") return;  // verbose_json always has its segments
  if (text == "word") {
    Invalid(f, "'word' is not supported: tandem gives segment timestamps only (use segment)");
  }
  Invalid(f, Quoted(text) + " is not one of segment, word");
}

}  // namespace

TranscriptionRequest ParseTranscriptionForm(std::span<const FormField> fields, bool translate) {
  const char* route = translate ? "/v1/audio/translations" : "/v1/audio/transcriptions";
  TranscriptionRequest request;
  request.translate = translate;
  std::map<std::string, size_t, std::less<>> seen;  // field name → first part index
  bool have_file = false;
  for (const FormField& f : fields) {
    const bool repeatable = !translate && f.name == kGranularities;
    const auto [first, fresh] = seen.emplace(f.name, f.index);
    if (!fresh && !repeatable) {
      Fail(ErrorKind::kInvalidArgument, f.name + ": given twice (parts " +
                                            std::to_string(first->second) + " and " +
                                            std::to_string(f.index) + ")");
    }
    if (f.name == "file") {
      have_file = true;
      request.file.assign(f.bytes.begin(), f.bytes.end());
      request.filename = f.filename.value_or("");
      request.content_type = f.content_type;
    } else if (f.name == "model") {
      request.model = Text(f);
    } else if (f.name == "prompt") {
      request.prompt = Text(f);
    } else if (f.name == "response_format") {
      request.response_format = ResponseFormat(f);
    } else if (f.name == "temperature") {
      request.temperature = Temperature(f);
    } else if (!translate && f.name == "language") {
      request.language = Language(f);
    } else if (!translate && f.name == "stream") {
      request.stream = Stream(f);
    } else if (!translate && f.name == kGranularities) {
      Granularity(f);
    } else {
      Fail(ErrorKind::kInvalidArgument,
           Where(f) + ": not a field tandem implements for " + route + "; remove it");
    }
  }
  if (!have_file) Fail(ErrorKind::kInvalidArgument, "file is required (the audio, as a file part)");
  return request;
}

}  // namespace tandem::server
