// /v1/audio/transcriptions and /v1/audio/translations (OpenAI's audio API) on the skeleton of
// generation_route.h: a multipart/form-data body (multipart_form.h) read into a
// TranscriptionRequest (transcription_fields.h), the recording prepared before any model work,
// the transcription message (multimodal/transcription_prompt.h) generated as a chat turn, and the
// answer in the requested response_format (transcription_format.h), or streamed as OpenAI's
// transcript.text.delta / transcript.text.done events.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "base/error.h"
#include "media/audio_format.h"
#include "multimodal/audio_input.h"
#include "multimodal/transcription_prompt.h"
#include "server/api_error.h"
#include "server/generation_route.h"
#include "server/multipart_form.h"
#include "server/routes.h"
#include "server/transcription_fields.h"
#include "server/transcription_format.h"

namespace tandem::server {
namespace {

constexpr int kMinTranscriptTokens = 64;

// The format a file part claims by its name's extension, for the check against its bytes: a
// format tandem decodes or one it knows it does not (m4a, mp4, webm, aac: refused by name);
// "" when the name says nothing (no extension, or another one), and the bytes decide. The part's
// Content-Type is not used: clients send application/octet-stream.
std::string ClaimedFormat(const std::string& filename) {
  const size_t dot = filename.rfind('.');
  if (dot == std::string::npos) return "";
  std::string ext = filename.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == "mpga") return "mp3";
  if (AudioFormatForName(ext)) return ext;
  for (const char* known : {"m4a", "mp4", "webm", "aac"}) {
    if (ext == known) return ext;
  }
  return "";
}

class TranscriptionDialect final : public ApiDialect {
 public:
  TranscriptionDialect(const TranscriptionRequest& form, double seconds)
      : ApiDialect({}),
        format_(form.response_format),
        translate_(form.translate),
        language_(form.language),
        temperature_(form.temperature),
        seconds_(seconds) {}

  void Parse(const Json&, GenerationRequest&) override {
    Fail(ErrorKind::kInternal, "the audio routes read their own forms");
  }

  // Not called: WholeResponse answers in the requested format (JSON or text).
  Json Whole(GenerationRun&, const ChatOutput&, const Json&) override {
    Fail(ErrorKind::kInternal, "the audio routes answer through WholeResponse");
  }

  HttpResponse WholeResponse(GenerationRun&, const ChatOutput& output, const Json&) override {
    TranscriptionBody body = Render(output.content);
    HttpResponse response;
    response.content_type = body.content_type;
    response.body = std::move(body.body);
    return response;
  }

  bool Parts(GenerationRun&, SseWriter& out, const ParsedDelta& delta) override {
    const std::string text = delta.Content();
    if (text.empty()) return true;
    text_ += text;
    return out.Event({{"type", "transcript.text.delta"}, {"delta", text}});
  }

  bool Finish(GenerationRun&, SseWriter& out, Json timings) override {
    Json done = {{"type", "transcript.text.done"}, {"text", Trimmed(text_)}};
    if (!translate_) {
      done["usage"] = {{"type", "duration"},
                       {"seconds", static_cast<int64_t>(std::ceil(seconds_))}};
    }
    done["timings"] = std::move(timings);
    return out.Event(done);
  }

 private:
  static std::string Trimmed(const std::string& s) {
    const size_t a = s.find_first_not_of(" \t\r\n");
    if (a == std::string::npos) return "";
    const size_t b = s.find_last_not_of(" \t\r\n");
    return s.substr(a, b - a + 1);
  }

  // One segment spans the recording: tandem has no timestamps within it.
  TranscriptionBody Render(const std::string& content) const {
    TranscriptionResult result;
    result.text = Trimmed(content);
    result.language = language_;
    result.duration = seconds_;
    TranscriptionSegment segment;
    segment.end = seconds_;
    segment.text = result.text;
    segment.temperature = temperature_;
    result.segments.push_back(std::move(segment));
    return RenderTranscription(result, format_, translate_);
  }

  const TranscriptionFormat format_;
  const bool translate_;
  const std::string language_;
  const double temperature_;
  const double seconds_;
  std::string text_;
};

HttpResponse ServeAudio(const RouteContext& context, const HttpRequest& http, bool translate) {
  const std::string content_type = http.Header("content-type");
  const std::vector<FormField> fields = ParseMultipartForm(content_type, http.body);
  TranscriptionRequest form = ParseTranscriptionForm(fields, translate);
  if (context.audio == nullptr) {
    Fail(ErrorKind::kInvalidArgument,
         "file: this model has no audio encoder: start the server with an --mmproj that has one "
         "(Gemma 4 E2B or E4B)");
  }
  auto prepared = std::make_shared<PreparedAudio>();
  try {
    *prepared = context.audio->Prepare(form.file, ClaimedFormat(form.filename));
  } catch (const Error& e) {
    Fail(ErrorKind::kInvalidArgument, "file: " + std::string(e.what()));
  }
  GenerationRequest request = NewRequest(context);
  request.model = form.model;
  request.chat = true;
  request.thinking = false;
  request.stream = form.stream;
  request.sampling.temperature = static_cast<float>(form.temperature);
  // No field bounds the answer: speech runs to about 3 words (4 tokens) a second, so a model that
  // does not stop is cut at three times that.
  request.max_tokens = kMinTranscriptTokens + static_cast<int>(std::ceil(12.0 * prepared->seconds));
  request.messages.push_back(TranscriptionMessage(
      {.translate = form.translate, .language = form.language, .prompt = form.prompt}));
  request.audio.push_back({.bytes = {}, .format = "", .where = "file", .prepared = prepared});
  auto dialect = std::make_shared<TranscriptionDialect>(form, prepared->seconds);
  return ServeParsedGeneration(context, http, std::move(dialect), std::move(request));
}

}  // namespace

HttpResponse HandleTranscriptions(const RouteContext& context, const HttpRequest& request) {
  return ServeAudio(context, request, false);
}

HttpResponse HandleTranslations(const RouteContext& context, const HttpRequest& request) {
  return ServeAudio(context, request, true);
}

}  // namespace tandem::server
