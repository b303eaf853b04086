// Tests of the Gemma 4 output parser: reasoning, tool calls, malformed text and streaming splits.
#include "tokenizer/chat_parser.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "base/error.h"

namespace tandem {
namespace {

using nlohmann::json;

// All parts of a stream merged (adjacent text of one kind joined) plus all warnings.
struct Collected {
  std::vector<ChatPart> parts;
  std::vector<std::string> warnings;
};

void Merge(Collected& all, ParsedDelta delta) {
  for (ChatPart& part : delta.parts) {
    if (part.kind != ChatPartKind::kToolCall && !all.parts.empty() &&
        all.parts.back().kind == part.kind) {
      all.parts.back().text += part.text;
    } else {
      all.parts.push_back(std::move(part));
    }
  }
  for (std::string& w : delta.warnings) all.warnings.push_back(std::move(w));
}

Collected FeedPieces(const std::vector<std::string>& pieces) {
  ChatOutputParser parser;
  Collected all;
  for (const std::string& piece : pieces) Merge(all, parser.Feed(piece));
  Merge(all, parser.Finish());
  return all;
}

Collected OneShot(const std::string& text) {
  Collected all;
  Merge(all, ParseChatOutput(text));
  return all;
}

std::string Describe(const Collected& c) {
  std::string out;
  for (const ChatPart& p : c.parts) {
    if (p.kind == ChatPartKind::kToolCall) {
      out += "[call " + p.tool_call.name + " " + p.tool_call.arguments + "]";
    } else {
      out += (p.kind == ChatPartKind::kContent ? "[content " : "[reasoning ") + p.text + "]";
    }
  }
  for (const std::string& w : c.warnings) out += "[warn " + w + "]";
  return out;
}

std::string ContentOf(const Collected& c) {
  std::string out;
  for (const ChatPart& p : c.parts) {
    if (p.kind == ChatPartKind::kContent) out += p.text;
  }
  return out;
}

std::string ReasoningOf(const Collected& c) {
  std::string out;
  for (const ChatPart& p : c.parts) {
    if (p.kind == ChatPartKind::kReasoning) out += p.text;
  }
  return out;
}

std::vector<ToolCall> CallsOf(const Collected& c) {
  std::vector<ToolCall> out;
  for (const ChatPart& p : c.parts) {
    if (p.kind == ChatPartKind::kToolCall) out.push_back(p.tool_call);
  }
  return out;
}

TEST(ChatParserTest, PlainContent) {
  Collected c = OneShot("Hello, world.");
  EXPECT_EQ(Describe(c), "[content Hello, world.]");
}

TEST(ChatParserTest, ThoughtChannelBecomesReasoning) {
  Collected c = OneShot("<|channel>thought\nLet me think.\nOK.<channel|>The answer is 4.<turn|>");
  EXPECT_EQ(Describe(c), "[reasoning Let me think.\nOK.][content The answer is 4.]");
}

TEST(ChatParserTest, EmptyThoughtBlockOfLargeModelsLeavesNoReasoning) {
  EXPECT_EQ(Describe(OneShot("<|channel>thought\n<channel|>Hi!")), "[content Hi!]");
  EXPECT_EQ(Describe(OneShot("<|channel>thought<channel|>Hi!")), "[content Hi!]");
}

TEST(ChatParserTest, ToolCallArgumentsBecomeJson) {
  Collected c = OneShot(
      "Checking.<|tool_call>call:get_weather{location:<|\"|>Paris, FR<|\"|>,days:3,"
      "metric:true,extra:null,ratio:-1.5e3,opts:{hourly:false,fields:[<|\"|>temp<|\"|>,"
      "<|\"|>wind<|\"|>],nested:{deep:[1,[2,{x:<|\"|>}{,:\"<|\"|>}]]}}}<tool_call|><|tool_"
      "response>");
  ASSERT_EQ(CallsOf(c).size(), 1u) << Describe(c);
  EXPECT_TRUE(c.warnings.empty()) << Describe(c);
  EXPECT_EQ(ContentOf(c), "Checking.");
  const ToolCall call = CallsOf(c)[0];
  EXPECT_EQ(call.name, "get_weather");
  EXPECT_TRUE(call.id.empty());
  EXPECT_EQ(json::parse(call.arguments), json::parse(R"({
      "location": "Paris, FR", "days": 3, "metric": true, "extra": null, "ratio": -1500.0,
      "opts": {"hourly": false, "fields": ["temp", "wind"],
               "nested": {"deep": [1, [2, {"x": "}{,:\""}]]}}})"));
  // Keys keep the model's order.
  EXPECT_EQ(call.arguments.substr(0, 12), R"({"location":)");
}

TEST(ChatParserTest, SeveralCallsKeepTheirOrderAmongText) {
  Collected c = OneShot(
      "<|channel>thought\nplan<channel|>A<|tool_call>call:f{}<tool_call|>B"
      "<|tool_call>call:g{n:1}<tool_call|><|tool_response>");
  EXPECT_EQ(Describe(c), "[reasoning plan][content A][call f {}][content B][call g {\"n\":1}]");
}

TEST(ChatParserTest, EndOfGenerationMarkersAreDropped) {
  EXPECT_EQ(Describe(OneShot("Done.<turn|>")), "[content Done.]");
  EXPECT_EQ(Describe(OneShot("Done.<eos>")), "[content Done.]");
}

TEST(ChatParserTest, LenientArgumentSyntax) {
  std::string error;
  auto call = ParseToolCallText(
      " call:lookup { <|\"|>quoted key<|\"|> : \"json \\\"str\\\"\" ,\n bare: some words ,"
      "n: None, list: [ 1 , 2 , ], }\n",
      &error);
  ASSERT_TRUE(call.has_value()) << error;
  EXPECT_EQ(call->name, "lookup");
  EXPECT_EQ(json::parse(call->arguments),
            json::parse(R"({"quoted key":"json \"str\"","bare":"some words","n":null,
                            "list":[1,2]})"));
}

TEST(ChatParserTest, InvalidUtf8InArgumentsDoesNotThrow) {
  auto call = ParseToolCallText("call:f{s:<|\"|>\xff\xfe<|\"|>}", nullptr);
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(json::parse(call->arguments)["s"].get<std::string>(), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

// A number beyond a double's range stays JSON: its text as a string (found by fuzz_chat_output;
// it was written as "<discarded>").
TEST(ChatParserTest, HugeNumbersInArgumentsStayValidJson) {
  auto call = ParseToolCallText("call:f{big:-9.5e41111,ok:1e3}", nullptr);
  ASSERT_TRUE(call.has_value());
  const json args = json::parse(call->arguments);
  EXPECT_EQ(args["big"], "-9.5e41111");
  EXPECT_EQ(args["ok"], 1000.0);
}

struct MalformedCase {
  const char* text;
  const char* content;  // expected content, all of the text kept
  const char* warning;  // expected fragment of the (single) warning
};

TEST(ChatParserTest, MalformedToolCallsSurviveAsContentWithWarning) {
  const std::string deep = std::string(80, '[') + std::string(80, ']');
  const std::string deep_call = "<|tool_call>call:f{a:" + deep + "}<tool_call|>";
  const MalformedCase cases[] = {
      {"Hi <|tool_call>call:f{a:1", "Hi <|tool_call>call:f{a:1",
       "unterminated tool call at byte 3"},
      {"<|tool_call>call:f{a:[1,2}<tool_call|>", "<|tool_call>call:f{a:[1,2}<tool_call|>",
       "malformed tool call at byte 0"},
      {"<|tool_call>call:f{a:<|\"|>x}<tool_call|>", "<|tool_call>call:f{a:<|\"|>x}<tool_call|>",
       "unterminated <|\"|> string"},
      {"<|tool_call>call:f{a 1}<tool_call|>", "<|tool_call>call:f{a 1}<tool_call|>",
       "expected ':'"},
      {"<|tool_call>call:f{a:}<tool_call|>", "<|tool_call>call:f{a:}<tool_call|>", "missing value"},
      {"<|tool_call>call:{a:1}<tool_call|>", "<|tool_call>call:{a:1}<tool_call|>",
       "missing function name"},
      {"<|tool_call>f{a:1}<tool_call|>", "<|tool_call>f{a:1}<tool_call|>", "expected 'call:'"},
      {"<|tool_call>call:f{a:1}}<tool_call|>", "<|tool_call>call:f{a:1}}<tool_call|>",
       "unexpected text"},
      {"<|tool_call>call:f{a:1}<turn|>", "<|tool_call>call:f{a:1}", "unterminated tool call"},
      {deep_call.c_str(), deep_call.c_str(), "nested deeper"},
      {"a<channel|>b", "a<channel|>b", "stray <channel|> at byte 1 kept as content"},
      {"a<tool_call|>b", "a<tool_call|>b", "stray <tool_call|>"},
  };
  for (const MalformedCase& test : cases) {
    Collected c = OneShot(test.text);
    EXPECT_EQ(ContentOf(c), test.content) << test.text;
    EXPECT_TRUE(CallsOf(c).empty()) << test.text;
    ASSERT_EQ(c.warnings.size(), 1u) << test.text << " -> " << Describe(c);
    EXPECT_NE(c.warnings[0].find(test.warning), std::string::npos)
        << test.text << " -> " << c.warnings[0];
  }
}

TEST(ChatParserTest, NewCallBeforeCloseKeepsFirstAsContent) {
  Collected c = OneShot("<|tool_call>call:f{a:1<|tool_call>call:g{b:2}<tool_call|>");
  EXPECT_EQ(Describe(c),
            "[content <|tool_call>call:f{a:1][call g {\"b\":2}]"
            "[warn unterminated tool call at byte 0 returned as content]");
}

TEST(ChatParserTest, ToolCallInsideThoughtClosesTheChannel) {
  Collected c = OneShot("<|channel>thought\nneed data<|tool_call>call:f{}<tool_call|>");
  ASSERT_EQ(CallsOf(c).size(), 1u) << Describe(c);
  EXPECT_EQ(ReasoningOf(c), "need data");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("inside the thought channel"), std::string::npos);
}

TEST(ChatParserTest, UnterminatedThoughtStaysReasoningWithWarning) {
  Collected c = OneShot("<|channel>thought\nstill thinking");
  EXPECT_EQ(Describe(c),
            "[reasoning still thinking][warn unterminated thought channel at byte 0: the text "
            "after <|channel> was returned as reasoning]");
  // An unknown channel name is kept as reasoning text.
  EXPECT_EQ(ReasoningOf(OneShot("<|channel>notes: x<channel|>")), "notes: x");
  // A partial marker at the very end is plain text.
  EXPECT_EQ(ContentOf(OneShot("see <|tool_ca")), "see <|tool_ca");
}

// Inputs covering every state and every recovery path, for the split tests below.
std::vector<std::string> StreamSamples() {
  return {
      "plain text with < and <| and <|chan but no marker",
      "<|channel>thought\nI think.<channel|>Answer \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80.<turn|>",
      "<|channel>thought\n<channel|>Hi",
      "<|channel>thou",
      "<|channel>thought<channel|>x",
      "Let me check.<|tool_call>call:get_weather{location:<|\"|>Paris<|\"|>,days:[1,2,{a:"
      "<|\"|>}]<|\"|>}]}<tool_call|><|tool_call>call:now{}<tool_call|><|tool_response>",
      "<|channel>thought\nneed<|tool_call>call:f{x:1}<tool_call|>after<eos>",
      "Hi <|tool_call>call:f{a:1",
      "<|tool_call>call:f{a:[1,2}<tool_call|>tail",
      "<|tool_call>call:f{a:1<|tool_call>call:g{b:2}<tool_call|>",
      "stray<channel|>and<tool_call|>and<tool_response|>and<|channel>thought\nin<|channel>x",
      "<|tool_call>call:f{a:1}<turn|>more",
      "partial at end <|tool_resp",
      "utf8 split \xE2\x82\xAC and bad \xFF bytes",
  };
}

TEST(ChatParserTest, EverySingleSplitMatchesOneShot) {
  for (const std::string& text : StreamSamples()) {
    const std::string expected = Describe(OneShot(text));
    for (size_t cut = 0; cut <= text.size(); ++cut) {
      Collected c = FeedPieces({text.substr(0, cut), text.substr(cut)});
      ASSERT_EQ(Describe(c), expected) << "text: " << text << "\ncut at " << cut;
    }
  }
}

TEST(ChatParserTest, ByteByByteAndRandomSplitsMatchOneShot) {
  std::mt19937 rng(1234);
  for (const std::string& text : StreamSamples()) {
    const std::string expected = Describe(OneShot(text));
    std::vector<std::string> bytes;
    for (char ch : text) bytes.emplace_back(1, ch);
    EXPECT_EQ(Describe(FeedPieces(bytes)), expected) << text;
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<std::string> pieces;
      for (size_t i = 0; i < text.size();) {
        size_t n = std::uniform_int_distribution<size_t>(0, 6)(rng);
        pieces.push_back(text.substr(i, n));
        i += n;
      }
      ASSERT_EQ(Describe(FeedPieces(pieces)), expected) << text << " trial " << trial;
    }
  }
}

TEST(ChatParserTest, StreamsEarlyButNeverAPartialMarker) {
  ChatOutputParser parser;
  EXPECT_EQ(parser.Feed("Hello <|cha").Content(), "Hello ");
  ParsedDelta d = parser.Feed("nnel>thought\nhm");
  EXPECT_EQ(d.Content(), "");
  EXPECT_EQ(d.Reasoning(), "hm");
  EXPECT_EQ(parser.Feed("m<chan").Reasoning(), "m");
  EXPECT_EQ(parser.Feed("nel|>ok <").Content(), "ok ");
  EXPECT_EQ(parser.Feed("b> caf\xC3").Content(), "<b> caf");
  EXPECT_EQ(parser.Feed("\xA9").Content(), "\xC3\xA9");
  ParsedDelta call = parser.Feed("<|tool_call>call:f{a:<|\"|>x");
  EXPECT_TRUE(call.empty());
  call = parser.Feed("<|\"|>}<tool_call|>");
  ASSERT_EQ(call.ToolCalls().size(), 1u);
  EXPECT_EQ(call.ToolCalls()[0].arguments, R"({"a":"x"})");
  EXPECT_TRUE(parser.Finish().empty());
  EXPECT_THROW(parser.Feed("x"), Error);
}

}  // namespace
}  // namespace tandem
