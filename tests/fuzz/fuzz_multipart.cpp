// libFuzzer target: arbitrary bytes as a multipart/form-data request, the Content-Type value up
// to the first "\n" and the body after it (the seeds' layout: bodies curl, urllib3 and the openai
// npm package wrote, and hand-written edge cases, corpus/fuzz_multipart/). The parts are then
// read as a transcription and a translation request, and rendered in every response format.
// Only tandem::Error may escape; a crash, a hang, UB, a leak, a view outside the body, parts
// out of order, a result beyond the limits or a subtitle cue broken by its text is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "server/multipart_form.h"
#include "server/transcription_fields.h"
#include "server/transcription_format.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

size_t Count(std::string_view text, std::string_view what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tandem::server;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t eol = input.find('\n');
  if (eol == std::string_view::npos) return 0;
  const std::string_view content_type = input.substr(0, eol);
  const std::string_view body = input.substr(eol + 1);
  MultipartLimits limits;
  limits.max_body_bytes = 1u << 16;
  limits.max_parts = 16;
  limits.max_header_bytes = 512;
  limits.max_name_bytes = 64;
  std::vector<FormField> fields;
  try {
    fields = ParseMultipartForm(content_type, body, limits);
  } catch (const tandem::Error&) {
    return 0;
  }
  Check(fields.size() <= limits.max_parts);
  size_t end_of_last = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    const FormField& f = fields[i];
    Check(f.index == i);
    Check(!f.name.empty() && f.name.size() <= limits.max_name_bytes);
    Check(f.bytes.data() == body.data() + f.offset);
    Check(f.offset >= end_of_last && f.offset + f.bytes.size() <= body.size());
    end_of_last = f.offset + f.bytes.size();
  }
  for (const bool translate : {false, true}) {
    try {
      const TranscriptionRequest request = ParseTranscriptionForm(fields, translate);
      Check(request.temperature >= 0.0 && request.temperature <= 1.0);
      Check(request.language.empty() || request.language.size() == 2);
    } catch (const tandem::Error&) {
    }
  }
  // Every part's bytes as a segment's text (cue rules over arbitrary bytes).
  TranscriptionResult result;
  for (const FormField& f : fields) {
    TranscriptionSegment s;
    s.id = static_cast<int64_t>(f.index);
    s.start = static_cast<double>(f.offset) / 7.0;
    s.end = s.start + static_cast<double>(f.bytes.size());
    s.text = std::string(f.bytes);
    result.text += s.text;
    result.segments.push_back(std::move(s));
  }
  if (!fields.empty()) result.language = fields[0].name.substr(0, 2);
  for (const TranscriptionFormat format :
       {TranscriptionFormat::kJson, TranscriptionFormat::kText, TranscriptionFormat::kVerboseJson,
        TranscriptionFormat::kSrt, TranscriptionFormat::kVtt}) {
    const TranscriptionBody rendered = RenderTranscription(result, format, false);
    Check(!rendered.content_type.empty());
    // No text can end a cue early or add a timing line: one arrow per cue, one blank line after
    // each (and one after WEBVTT).
    if (format == TranscriptionFormat::kSrt) {
      Check(Count(rendered.body, "-->") == Count(rendered.body, "\n\n"));
    } else if (format == TranscriptionFormat::kVtt) {
      Check(Count(rendered.body, "-->") + 1 == Count(rendered.body, "\n\n"));
    }
  }
  return 0;
}
