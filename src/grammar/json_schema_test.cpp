#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"

namespace tandem {
namespace {

// GBNF text compiled against a one-token vocabulary (for byte matching, no tokens).
std::shared_ptr<CompiledGrammar> CompileBytes(const std::string& gbnf) {
  auto vocab = std::make_shared<const TokenVocabulary>(
      std::vector<std::string>{"x"}, std::vector<uint8_t>{1}, std::vector<int32_t>{});
  return std::make_shared<CompiledGrammar>(ParseGbnf(gbnf), vocab);
}

// Whether the grammar of `schema` accepts exactly `text` (byte matching, no tokens).
bool SchemaAccepts(const std::string& schema, const std::string& text,
                   JsonSyntax syntax = JsonSyntax::kJson) {
  GrammarMatcher m(CompileBytes(JsonSchemaTextToGbnf(schema, syntax)));
  return m.AcceptBytes(text) && m.IsComplete();
}

// A typical extraction schema: nine required properties whose schema order is not alphabetical.
// The grammar used to require them sorted by name (the schema was read into a sorted map), so a
// document in the schema's own order was rejected at its first key.
constexpr const char* kExtraction = R"({"type": "object", "properties": {
  "name": {"type": "string"}, "age": {"type": "integer"}, "email": {"type": "string"},
  "city": {"type": "string"}, "country": {"type": "string"}, "phone": {"type": "string"},
  "active": {"type": "boolean"}, "score": {"type": "number"},
  "tags": {"type": "array", "items": {"type": "string"}}},
  "required": ["name", "age", "email", "city", "country", "phone", "active", "score", "tags"],
  "additionalProperties": false})";

TEST(JsonSchema, NinePropertiesInSchemaOrder) {
  EXPECT_TRUE(SchemaAccepts(kExtraction,
                            R"({"name": "Ada", "age": 36, "email": "a@b.c", "city": "London", )"
                            R"("country": "UK", "phone": "123", "active": true, "score": 1.5, )"
                            R"("tags": ["x"]})"));
  // Sorted by name is not the schema's order.
  EXPECT_FALSE(SchemaAccepts(kExtraction,
                             R"({"active": true, "age": 36, "city": "London", "country": "UK", )"
                             R"("email": "a@b.c", "name": "Ada", "phone": "123", "score": 1.5, )"
                             R"("tags": ["x"]})"));
  // A missing required property.
  EXPECT_FALSE(SchemaAccepts(kExtraction,
                             R"({"name": "Ada", "age": 36, "email": "a@b.c", "city": "London", )"
                             R"("country": "UK", "phone": "123", "active": true, "score": 1.5})"));
}

// One-line JSON (JsonSyntax::kJsonOneLine): `, ` and `: ` after separators, no other whitespace,
// in schema-compiled objects and arrays and in free values (an object without properties) alike.
// The default syntax accepts every spelling; the one-line grammar only the one-line one, and it
// forces the bytes from a value's end to the next value's start (`, "b": `).
TEST(JsonSchema, OneLineWhitespaceIsFixed) {
  const std::string schema = R"({"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "array", "items": {"type": "integer"}},
    "c": {"type": "object"}}, "required": ["a", "b", "c"]})";
  const std::string one_line = R"({"a": 1, "b": [2, 3], "c": {"x": [true, null], "y": {}}})";
  const std::string spellings[] = {
      R"({"a":1,"b":[2,3],"c":{"x":[true,null],"y":{}}})",
      R"({ "a": 1, "b": [2, 3], "c": {"x": [true, null], "y": {}} })",
      "{\"a\": 1,\n  \"b\": [2, 3], \"c\": {\"x\": [true, null], \"y\": {}}}",
      R"({"a": 1, "b": [2, 3], "c": {"x": [true,null], "y": {}}})",
      R"({"a" : 1, "b": [2, 3], "c": {"x": [true, null], "y": {}}})",
  };
  EXPECT_TRUE(SchemaAccepts(schema, one_line));
  EXPECT_TRUE(SchemaAccepts(schema, one_line, JsonSyntax::kJsonOneLine));
  for (const std::string& text : spellings) {
    EXPECT_TRUE(SchemaAccepts(schema, text)) << text;
    EXPECT_FALSE(SchemaAccepts(schema, text, JsonSyntax::kJsonOneLine)) << text;
  }
  GrammarMatcher m(CompileBytes(JsonSchemaTextToGbnf(schema, JsonSyntax::kJsonOneLine)));
  ASSERT_TRUE(m.AcceptBytes(R"({"a": 1)"));
  EXPECT_EQ(m.ForcedBytes(64), "");  // more digits, or the separator
  ASSERT_TRUE(m.AcceptBytes(","));
  EXPECT_EQ(m.ForcedBytes(64), R"( "b": [)");
  // json_object mode too.
  auto object = CompileBytes(JsonObjectGbnf(JsonSyntax::kJsonOneLine));
  GrammarMatcher o(object);
  EXPECT_TRUE(o.AcceptBytes(R"({"k": [1, {"j": "v"}]})") && o.IsComplete());
  GrammarMatcher o2(object);
  EXPECT_FALSE(o2.AcceptBytes(R"({"k":1})"));
}

TEST(JsonSchema, OptionalPropertiesKeepSchemaOrder) {
  const std::string schema = R"({"type": "object", "properties": {
    "zeta": {"type": "integer"}, "alpha": {"type": "integer"}, "mid": {"type": "integer"}}})";
  EXPECT_TRUE(SchemaAccepts(schema, R"({"zeta": 1, "alpha": 2, "mid": 3})"));
  EXPECT_TRUE(SchemaAccepts(schema, R"({"zeta": 1, "mid": 3})"));
  EXPECT_TRUE(SchemaAccepts(schema, R"({"mid": 3})"));
  EXPECT_TRUE(SchemaAccepts(schema, R"({})"));
  EXPECT_FALSE(SchemaAccepts(schema, R"({"alpha": 2, "zeta": 1})"));
}

TEST(JsonSchema, ErrorsNameKeywordAndPath) {
  try {
    JsonSchemaTextToGbnf(
        R"({"type": "object", "properties": {"a": {"type": "string", "foo": 1}}})");
    FAIL() << "no error";
  } catch (const JsonSchemaError& e) {
    EXPECT_EQ(e.keyword(), "foo");
    EXPECT_EQ(e.path(), "/properties/a/foo");
  }
  EXPECT_THROW(JsonSchemaTextToGbnf("{"), JsonSchemaError);
}

// Array items and optional members are written twice or more; nested deep they must not grow
// the grammar exponentially (15 levels: 2^15 copies of the innermost schema).
TEST(JsonSchema, NestingGrowsTheGrammarLinearly) {
  std::string schema = R"({"type": "integer"})";
  std::string doc = "1";
  for (int i = 0; i < 15; ++i) {
    schema = R"({"type": "object", "properties": {"a": {"type": "array", "items": )" + schema +
             R"(, "maxItems": 2}, "b": {"type": "integer"}}})";
    doc = R"({"a": [)" + doc + "]}";
  }
  const std::string gbnf = JsonSchemaTextToGbnf(schema);
  EXPECT_LT(gbnf.size(), 200000u);
  EXPECT_TRUE(SchemaAccepts(schema, doc));
}

}  // namespace
}  // namespace tandem
