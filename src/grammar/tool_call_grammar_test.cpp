#include "grammar/tool_call_grammar.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"
#include "grammar/json_schema.h"
#include "tokenizer/chat_parser.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace tandem {
namespace {

// Whether GBNF `gbnf` accepts exactly `text` (byte matching, no tokens).
bool Accepts(const std::string& gbnf, const std::string& text) {
  auto vocab = std::make_shared<const TokenVocabulary>(
      std::vector<std::string>{"x"}, std::vector<uint8_t>{1}, std::vector<int32_t>{});
  GrammarMatcher m(std::make_shared<CompiledGrammar>(ParseGbnf(gbnf), vocab));
  return m.AcceptBytes(text) && m.IsComplete();
}

std::string GemmaSchema(const char* schema) {
  return JsonSchemaToGbnf(nlohmann::ordered_json::parse(schema), JsonSyntax::kGemmaToolCall);
}

const char* kWeather = R"({"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer", "minimum": 1, "maximum": 7},
    "unit": {"enum": ["C", "F"]}, "tags": {"type": "array", "items": {"type": "string"}},
    "when": {"type": "string", "format": "date"}, "extra": {}},
  "required": ["city", "days"], "additionalProperties": false})";

TEST(GemmaToolCallSyntax, BareKeysQuoteTokensNoSpaces) {
  const std::string g = GemmaSchema(kWeather);
  EXPECT_TRUE(Accepts(g, R"({city:<|"|>Paris<|"|>,days:3})"));
  EXPECT_TRUE(Accepts(g, R"({city:<|"|>a "quoted" <x> | y<|"|>,days:7,unit:<|"|>F<|"|>,)"
                         R"(tags:[<|"|>a<|"|>,<|"|>b<|"|>],when:<|"|>2024-02-29<|"|>,)"
                         R"(extra:{k:[1,true,null,<|"|>s<|"|>]}})"));
  EXPECT_FALSE(Accepts(g, R"({"city":"Paris","days":3})"));         // JSON syntax
  EXPECT_FALSE(Accepts(g, R"({city: <|"|>Paris<|"|>, days: 3})"));  // whitespace
  EXPECT_FALSE(Accepts(g, R"({city:<|"|>Paris<|"|>,days:8})"));     // maximum
  EXPECT_FALSE(Accepts(g, R"({days:3})"));                          // required
  EXPECT_FALSE(Accepts(g, R"({city:<|"|>Paris<|"|>,days:3,unit:<|"|>K<|"|>})"));
  EXPECT_FALSE(Accepts(g, R"({city:<|"|>Paris<|"|>,days:3,when:<|"|>2023-02-29<|"|>})"));
  // String text never holds chat markup.
  EXPECT_FALSE(Accepts(g, R"({city:<|"|>a<|tool_call>b<|"|>,days:3})"));
  EXPECT_FALSE(Accepts(g, R"({city:<|"|>a<turn|>b<|"|>,days:3})"));
}

TEST(GemmaToolCallSyntax, ConstEnumAndRefsInGemmaText) {
  const std::string g = GemmaSchema(R"({"$defs": {"p": {"type": "object", "properties":
      {"x": {"const": {"a": "b", "n": [1, 2]}}}, "required": ["x"]}},
      "type": "object", "properties": {"p": {"$ref": "#/$defs/p"}}, "required": ["p"]})");
  EXPECT_TRUE(Accepts(g, R"({p:{x:{a:<|"|>b<|"|>,n:[1,2]}}})"));
  EXPECT_FALSE(Accepts(g, R"({p:{x:{"a":"b","n":[1,2]}}})"));
}

TEST(GemmaToolCallSyntax, RefusesWhatItCannotWrite) {
  try {
    GemmaSchema(R"({"type": "object", "properties": {"s": {"type": "string", "pattern": "a+"}}})");
    FAIL() << "no error";
  } catch (const JsonSchemaError& e) {
    EXPECT_EQ(e.keyword(), "pattern");
    EXPECT_EQ(e.path(), "/properties/s/pattern");
  }
  EXPECT_THROW(GemmaSchema(R"({"type": "object", "properties": {"a b": {}}})"), JsonSchemaError);
}

std::vector<ToolSpec> Tools() {
  return {{"get_weather", "", nlohmann::json::parse(kWeather)}, {"noop", "", nullptr}};
}

TEST(ToolCallGrammar, OneOrMoreCallsParsedByTheChatParser) {
  const std::string g = ToolCallGbnf(Tools(), false);
  const std::string call =
      R"(<|tool_call>call:get_weather{city:<|"|>Oslo<|"|>,days:2}<tool_call|>)";
  EXPECT_TRUE(Accepts(g, call));
  EXPECT_TRUE(Accepts(g, call + "<|tool_call>call:noop{}<tool_call|>"));
  EXPECT_FALSE(Accepts(g, "text first " + call));
  EXPECT_FALSE(Accepts(g, "<|tool_call>call:other{}<tool_call|>"));
  EXPECT_FALSE(Accepts(ToolCallGbnf(Tools(), true), call + call));
  // The accepted text is what the chat parser reads as a call with JSON arguments.
  const ParsedDelta parsed = ParseChatOutput(call);
  ASSERT_EQ(parsed.ToolCalls().size(), 1u);
  EXPECT_EQ(parsed.ToolCalls()[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(parsed.ToolCalls()[0].arguments),
            nlohmann::json::parse(R"({"city": "Oslo", "days": 2})"));
}

TEST(ToolCallGrammar, BadToolsAreNamed) {
  EXPECT_THROW(ToolCallGbnf({}, false), Error);
  EXPECT_THROW(ToolCallGbnf({{"a b", "", nullptr}}, false), Error);
  try {
    ToolCallGbnf({{"f", "", nlohmann::json::parse(R"({"type": "object", "foo": 1})")}}, false);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tools[0] ('f') parameters"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'foo' at /foo"), std::string::npos) << e.what();
  }
}

// The markup tokens of the bundled pair's (Gemma 4 format) tokenizer: not matchable by default,
// matchable by their text when asked, so a tool-call grammar can produce them as single tokens.
TEST(ToolCallGrammar, MarkupTokensMatchableOnRequest) {
  const Tokenizer tokenizer(LoadVocabFromTokenizerJson(std::string(TANDEM_SOURCE_DIR) +
                                                       "/models/hf/target/tokenizer.json"));
  const auto plain = TokenVocabulary::FromTokenizer(tokenizer);
  const auto tools = TokenVocabulary::FromTokenizer(tokenizer, kToolCallMarkup);
  for (const std::string_view text : kToolCallMarkup) {
    const int32_t id = tokenizer.FindToken(text);
    ASSERT_GE(id, 0) << text;
    EXPECT_FALSE(plain->matchable(id)) << text;
    EXPECT_TRUE(tools->matchable(id)) << text;
    EXPECT_EQ(tools->piece(id), text);
  }
  const int32_t channel = tokenizer.FindToken(chat_marker::kChannelOpen);
  ASSERT_GE(channel, 0);
  EXPECT_FALSE(tools->matchable(channel));
  // A grammar writing `<|"|>` allows that token (and the byte spellings' first token).
  auto grammar = std::make_shared<CompiledGrammar>(ParseGbnf(R"(root ::= "<|\"|>")"), tools);
  GrammarMatcher m(grammar);
  TokenBitmask mask(tools->size());
  m.FillNextTokenMask(mask);
  EXPECT_TRUE(mask.Test(tokenizer.FindToken(chat_marker::kQuote)));
}

}  // namespace
}  // namespace tandem
