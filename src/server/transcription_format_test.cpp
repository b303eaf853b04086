// OpenAI's transcription response bodies, each format against the bytes OpenAI's service
// answers with for the same transcript (its documented examples: one segment " Hello, how are
// you?" from 0 to 4 s), and the subtitle rules at their edges.
#include "server/transcription_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "server/json_fields.h"

namespace tandem::server {
namespace {

TranscriptionResult Hello() {
  TranscriptionResult r;
  r.text = "Hello, how are you?";
  r.language = "en";
  r.duration = 2.95;
  TranscriptionSegment s;
  s.id = 0;
  s.start = 0.0;
  s.end = 4.0;
  s.text = " Hello, how are you?";
  s.tokens = {2425, 11, 577};
  r.segments.push_back(s);
  return r;
}

TEST(TranscriptionFormat, Names) {
  EXPECT_EQ(TranscriptionFormatFromName("verbose_json"), TranscriptionFormat::kVerboseJson);
  EXPECT_EQ(TranscriptionFormatFromName("vtt"), TranscriptionFormat::kVtt);
  EXPECT_EQ(TranscriptionFormatFromName("JSON"), std::nullopt);
  EXPECT_EQ(TranscriptionFormatFromName("diarized_json"), std::nullopt);
  EXPECT_STREQ(TranscriptionFormatName(TranscriptionFormat::kSrt), "srt");
}

TEST(TranscriptionFormat, JsonAndText) {
  TranscriptionBody b = RenderTranscription(Hello(), TranscriptionFormat::kJson, false);
  EXPECT_EQ(b.content_type, "application/json");
  EXPECT_EQ(b.body, R"({"text":"Hello, how are you?","usage":{"type":"duration","seconds":3}})");
  b = RenderTranscription(Hello(), TranscriptionFormat::kJson, true);
  EXPECT_EQ(b.body, R"({"text":"Hello, how are you?"})");
  b = RenderTranscription(Hello(), TranscriptionFormat::kText, false);
  EXPECT_EQ(b.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(b.body, "Hello, how are you?\n");
}

TEST(TranscriptionFormat, VerboseJson) {
  TranscriptionResult r = Hello();
  r.segments[0].temperature = 0.2;
  r.segments[0].seek = 3000;
  const TranscriptionBody b = RenderTranscription(r, TranscriptionFormat::kVerboseJson, false);
  EXPECT_EQ(b.content_type, "application/json");
  const Json j = Json::parse(b.body);
  EXPECT_EQ(j["task"], "transcribe");
  EXPECT_EQ(j["language"], "english");
  EXPECT_EQ(j["duration"], 2.95);
  EXPECT_EQ(j["text"], "Hello, how are you?");
  EXPECT_EQ(j["usage"], Json::parse(R"({"type": "duration", "seconds": 3})"));
  ASSERT_EQ(j["segments"].size(), 1u);
  const Json& s = j["segments"][0];
  // OpenAI's segment: these ten fields, in this order, with these JSON types.
  const std::vector<std::string> keys = {"id",
                                         "seek",
                                         "start",
                                         "end",
                                         "text",
                                         "tokens",
                                         "temperature",
                                         "avg_logprob",
                                         "compression_ratio",
                                         "no_speech_prob"};
  std::vector<std::string> got;
  for (auto it = s.begin(); it != s.end(); ++it) got.push_back(it.key());
  EXPECT_EQ(got, keys);
  EXPECT_TRUE(s["id"].is_number_integer());
  EXPECT_EQ(s["seek"], 3000);
  EXPECT_EQ(s["start"], 0.0);
  EXPECT_EQ(s["end"], 4.0);
  EXPECT_EQ(s["text"], " Hello, how are you?");
  EXPECT_EQ(s["tokens"], Json::parse("[2425, 11, 577]"));
  EXPECT_EQ(s["temperature"], 0.2);
  EXPECT_TRUE(s["avg_logprob"].is_number_float());

  r.language = "de";  // a translation is always English
  const Json t = Json::parse(RenderTranscription(r, TranscriptionFormat::kVerboseJson, true).body);
  EXPECT_EQ(t["task"], "translate");
  EXPECT_EQ(t["language"], "english");
  EXPECT_FALSE(t.contains("usage"));
  r.language = "";
  EXPECT_EQ(Json::parse(
                RenderTranscription(r, TranscriptionFormat::kVerboseJson, false).body)["language"],
            "");
  r.text = "a\xff";  // invalid UTF-8 is replaced, never thrown
  EXPECT_EQ(Json::parse(RenderTranscription(r, TranscriptionFormat::kJson, false).body)["text"],
            "a\xEF\xBF\xBD");
}

TEST(TranscriptionFormat, SrtAndVtt) {
  TranscriptionResult r = Hello();
  TranscriptionSegment second;
  second.id = 1;
  second.start = 4.0;
  second.end = 3661.5;
  second.text = "Fine.";
  r.segments.push_back(second);
  TranscriptionBody b = RenderTranscription(r, TranscriptionFormat::kSrt, false);
  EXPECT_EQ(b.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(b.body,
            "1\n00:00:00,000 --> 00:00:04,000\nHello, how are you?\n\n"
            "2\n00:00:04,000 --> 01:01:01,500\nFine.\n\n");
  b = RenderTranscription(r, TranscriptionFormat::kVtt, false);
  EXPECT_EQ(b.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(b.body,
            "WEBVTT\n\n"
            "00:00:00.000 --> 00:00:04.000\nHello, how are you?\n\n"
            "00:00:04.000 --> 01:01:01.500\nFine.\n\n");
  r.segments.clear();
  EXPECT_EQ(RenderTranscription(r, TranscriptionFormat::kSrt, false).body, "");
  EXPECT_EQ(RenderTranscription(r, TranscriptionFormat::kVtt, false).body, "WEBVTT\n\n");
}

TEST(TranscriptionFormat, CueTextCannotBreakTheCue) {
  TranscriptionResult r;
  const auto segment = [&](const std::string& text) {
    TranscriptionSegment s;
    s.text = text;
    r.segments.push_back(s);
  };
  segment("  a --> b\r\n\r\n\n  c ---> d -> e  ");
  segment(" \n\t ");  // nothing to show: no cue, and the numbering goes on
  segment("x & <i>y</i>");
  EXPECT_EQ(RenderTranscription(r, TranscriptionFormat::kSrt, false).body,
            "1\n00:00:00,000 --> 00:00:00,000\na -> b\nc -> d -> e\n\n"
            "2\n00:00:00,000 --> 00:00:00,000\nx & <i>y</i>\n\n");
  EXPECT_EQ(RenderTranscription(r, TranscriptionFormat::kVtt, false).body,
            "WEBVTT\n\n"
            "00:00:00.000 --> 00:00:00.000\na --&gt; b\nc ---&gt; d -&gt; e\n\n"
            "00:00:00.000 --> 00:00:00.000\nx &amp; &lt;i&gt;y&lt;/i&gt;\n\n");
}

TEST(TranscriptionFormat, Timestamps) {
  EXPECT_EQ(SubtitleTimestamp(0.0, ','), "00:00:00,000");
  EXPECT_EQ(SubtitleTimestamp(59.9994, '.'), "00:00:59.999");
  EXPECT_EQ(SubtitleTimestamp(59.9996, '.'), "00:01:00.000");
  EXPECT_EQ(SubtitleTimestamp(0.0005, ','), "00:00:00,001");
  EXPECT_EQ(SubtitleTimestamp(3599.999, ','), "00:59:59,999");
  EXPECT_EQ(SubtitleTimestamp(360000.25, ','), "100:00:00,250");
  EXPECT_EQ(SubtitleTimestamp(-1.0, ','), "00:00:00,000");
  EXPECT_EQ(SubtitleTimestamp(std::nan(""), ','), "00:00:00,000");
  EXPECT_EQ(SubtitleTimestamp(std::numeric_limits<double>::infinity(), ','), "00:00:00,000");
}

}  // namespace
}  // namespace tandem::server
