#include "grammar/grammar_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "grammar/grammar_matcher.h"
#include "grammar/tool_call_grammar.h"
#include "tokenizer/tokenizer_json.h"

namespace tandem {
namespace {

TEST(GrammarCache, KeepsTheMostRecentBySourceAndVocabulary) {
  const Tokenizer tokenizer(LoadVocabFromTokenizerJson(std::string(TANDEM_SOURCE_DIR) +
                                                       "/models/hf/target/tokenizer.json"));
  GrammarCache cache(tokenizer, 2);
  const auto gbnf = [](const std::string& text) { return ConstraintSource::Gbnf(text); };
  const auto a = cache.Compile(gbnf(R"(root ::= "a")"));
  EXPECT_EQ(cache.Compile(gbnf(R"(root ::= "a")")), a);
  // A tool-call grammar's vocabulary matches the markup tokens.
  const ConstraintSource calls =
      ConstraintSource::ToolCalls({ToolSpec{"f", "", nlohmann::ordered_json()}}, true);
  const auto tools = cache.Compile(calls);
  const int32_t quote = tokenizer.FindToken(chat_marker::kQuote);
  EXPECT_TRUE(tools->vocab().matchable(quote));
  EXPECT_FALSE(a->vocab().matchable(quote));
  EXPECT_EQ(cache.Compile(gbnf(R"(root ::= "a")")), a);  // one of the 2 kept (now most recent)
  cache.Compile(gbnf(R"(root ::= "b")"));                // evicts the tools', the least recent
  EXPECT_EQ(cache.Compile(gbnf(R"(root ::= "a")")), a);
  EXPECT_NE(cache.Compile(calls), tools);
  // The encoder drafts forced strings as the tokenizer writes them.
  EXPECT_EQ(a->encoder()("<|\"|>"), std::vector<int32_t>{quote});
  EXPECT_THROW(cache.Compile(gbnf("root ::= missing")), Error);
}

// A schema is found by its source: the same schema in the same syntax is one grammar, another
// syntax or another member order is another; what it accepts is the schema's.
TEST(GrammarCache, FindsASchemaByItsSource) {
  const Tokenizer tokenizer(LoadVocabFromTokenizerJson(std::string(TANDEM_SOURCE_DIR) +
                                                       "/models/hf/target/tokenizer.json"));
  GrammarCache cache(tokenizer, 4);
  const auto schema = ParseJsonSchemaText(
      R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
          "required": ["a", "b"]})");
  const auto spaced = cache.Compile(ConstraintSource::JsonSchema(schema, JsonSyntax::kJson));
  EXPECT_EQ(cache.Compile(ConstraintSource::JsonSchema(schema, JsonSyntax::kJson)), spaced);
  EXPECT_NE(cache.Compile(ConstraintSource::JsonSchema(schema, JsonSyntax::kJsonOneLine)), spaced);
  auto reordered = schema;
  reordered["properties"] =
      ParseJsonSchemaText(R"({"b": {"type": "string"}, "a": {"type": "integer"}})");
  EXPECT_NE(cache.Compile(ConstraintSource::JsonSchema(reordered, JsonSyntax::kJson)), spaced);
  EXPECT_NE(cache.Compile(ConstraintSource::JsonObject(JsonSyntax::kJson)), spaced);
  GrammarMatcher m(spaced);
  EXPECT_TRUE(m.AcceptBytes(R"({"a": 1, "b": "x"})") && m.IsComplete());
  GrammarMatcher wrong(spaced);
  EXPECT_FALSE(wrong.AcceptBytes(R"({"b": "x", "a": 1})") && wrong.IsComplete());
  EXPECT_THROW(cache.Compile(ConstraintSource::JsonSchema(
                   ParseJsonSchemaText(R"({"uniqueItems": true})"), JsonSyntax::kJson)),
               JsonSchemaError);
}

}  // namespace
}  // namespace tandem
