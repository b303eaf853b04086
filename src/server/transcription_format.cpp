// OpenAI's transcription response formats.
#include "server/transcription_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "multimodal/language_names.h"
#include "server/json_fields.h"

namespace tandem::server {
namespace {

constexpr const char* kTextPlain = "text/plain; charset=utf-8";

constexpr const char* kFormatNames[] = {"json", "text", "verbose_json", "srt", "vtt"};

// The segment's text as one cue's lines: each line trimmed, blank lines dropped (a blank line
// ends a cue), "-->" (the timing arrow) written "->". WebVTT also escapes '&', '<' and '>'.
std::string CueText(std::string_view text, bool vtt) {
  std::string out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (line.empty()) continue;
    if (!out.empty()) out += '\n';
    const size_t line_start = out.size();
    for (char c : line) {
      if (vtt && c == '&') {
        out += "&amp;";
      } else if (vtt && c == '<') {
        out += "&lt;";
      } else if (vtt && c == '>') {
        out += "&gt;";
      } else if (c == '>' && out.size() >= line_start + 2 && out[out.size() - 1] == '-' &&
                 out[out.size() - 2] == '-') {
        while (out.size() >= line_start + 2 && out[out.size() - 2] == '-') out.pop_back();
        out += '>';
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string Subtitles(const TranscriptionResult& result, bool vtt) {
  std::string out = vtt ? "WEBVTT\n\n" : "";
  int cue = 0;
  for (const TranscriptionSegment& s : result.segments) {
    const std::string text = CueText(s.text, vtt);
    if (text.empty()) continue;  // a cue without text would end at its timing line
    if (!vtt) out += std::to_string(++cue) + "\n";
    const char mark = vtt ? '.' : ',';
    out += SubtitleTimestamp(s.start, mark) + " --> " + SubtitleTimestamp(s.end, mark) + "\n";
    out += text + "\n\n";
  }
  return out;
}

Json Usage(double duration) {
  const double seconds = std::isfinite(duration) && duration > 0 ? std::ceil(duration) : 0.0;
  return {{"type", "duration"}, {"seconds", static_cast<int64_t>(seconds)}};
}

Json VerboseJson(const TranscriptionResult& result, bool translate) {
  Json segments = Json::array();
  for (const TranscriptionSegment& s : result.segments) {
    segments.push_back({{"id", s.id},
                        {"seek", s.seek},
                        {"start", s.start},
                        {"end", s.end},
                        {"text", s.text},
                        {"tokens", s.tokens},
                        {"temperature", s.temperature},
                        {"avg_logprob", s.avg_logprob},
                        {"compression_ratio", s.compression_ratio},
                        {"no_speech_prob", s.no_speech_prob}});
  }
  Json body = {{"task", translate ? "translate" : "transcribe"},
               {"language", translate ? std::string("english") : LanguageName(result.language)},
               {"duration", result.duration},
               {"text", result.text},
               {"segments", std::move(segments)}};
  if (!translate) body["usage"] = Usage(result.duration);
  return body;
}

}  // namespace

const char* TranscriptionFormatName(TranscriptionFormat format) {
  return kFormatNames[static_cast<int>(format)];
}

std::optional<TranscriptionFormat> TranscriptionFormatFromName(std::string_view name) {
  for (size_t i = 0; i < std::size(kFormatNames); ++i) {
    if (name == kFormatNames[i]) return static_cast<TranscriptionFormat>(i);
  }
  return std::nullopt;
}

std::string SubtitleTimestamp(double seconds, char decimal_mark) {
  const long long ms = std::isfinite(seconds) && seconds > 0 ? std::llround(seconds * 1000.0) : 0;
  char text[48];
  std::snprintf(text, sizeof text, "%02lld:%02lld:%02lld%c%03lld", ms / 3600000, ms / 60000 % 60,
                ms / 1000 % 60, decimal_mark, ms % 1000);
  return text;
}

TranscriptionBody RenderTranscription(const TranscriptionResult& result, TranscriptionFormat format,
                                      bool translate) {
  switch (format) {
    case TranscriptionFormat::kJson: {
      Json body = {{"text", result.text}};
      if (!translate) body["usage"] = Usage(result.duration);
      return {"application/json", JsonText(body)};
    }
    case TranscriptionFormat::kText:
      return {kTextPlain, result.text + "\n"};
    case TranscriptionFormat::kVerboseJson:
      return {"application/json", JsonText(VerboseJson(result, translate))};
    case TranscriptionFormat::kSrt:
      return {kTextPlain, Subtitles(result, false)};
    case TranscriptionFormat::kVtt:
      return {kTextPlain, Subtitles(result, true)};
  }
  return {kTextPlain, result.text + "\n"};
}

}  // namespace tandem::server
