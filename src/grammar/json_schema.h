// JSON Schema -> GBNF: the documents a schema accepts, as a grammar (OpenAI strict structured
// outputs plus common keywords).
//
// Supported: type (one or a list), properties / required / additionalProperties (false, true or a
// schema), items / minItems / maxItems, enum, const, anyOf, oneOf (as anyOf), allOf with one
// member, $ref to "#", "#/$defs/..." and "#/definitions/...", string minLength / maxLength /
// pattern (a regex subset, see regex_to_gbnf.h) / format (date, time, date-time, uuid, email),
// integer minimum / maximum / exclusiveMinimum / exclusiveMaximum (exact), number minimum 0 or
// exclusiveMinimum... only as a sign restriction (minimum: 0). Annotations (title, description,
// default, examples, $schema, $id, $comment, deprecated, readOnly, writeOnly, strict) are ignored.
//
// Properties come in schema order, required ones first, optional ones after them (each may be
// left out). When `properties` is given and additionalProperties is absent, no other properties
// are allowed. Whitespace between tokens: nothing, one space, or a newline and up to 24 spaces or
// tabs (kJsonOneLine: fixed, see below). Anything else throws JsonSchemaError naming the keyword
// and its JSON pointer.
//
// JsonSyntax::kGemmaToolCall writes the same values in Gemma 4's tool-call argument syntax
// (docs/gemma4.md): no whitespace, bare object keys (`{key:value,...}`), strings as raw text
// between
// `<|"|>` tokens (no escapes). Its strings may not contain `<|` or `|>` (the chat markup), and
// length-bounded ones neither `<` nor `|`; `pattern` is refused (its character set is JSON's).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "base/error.h"

namespace tandem {

class JsonSchemaError : public Error {
 public:
  JsonSchemaError(const std::string& keyword, const std::string& path, const std::string& why);
  const std::string& keyword() const { return keyword_; }
  const std::string& path() const { return path_; }  // JSON pointer, "" for the root

 private:
  std::string keyword_, path_;
};

inline constexpr size_t kMaxSchemaBytes = 1 << 20;
inline constexpr int kMaxSchemaDepth = 32;

// kJsonOneLine: JSON with fixed whitespace, `, ` and `: ` after separators and none elsewhere
// (`{"a": 1, "b": [2, 3]}`, as XGrammar's any_whitespace=false and Python's json.dumps write it):
// every document the schema accepts is still accepted up to whitespace, and the grammar alone
// decides the whitespace, so keys and separators are forced strings (drafted for free under
// speculation, docs/mtp.md § Constrained drafting).
enum class JsonSyntax { kJson, kGemmaToolCall, kJsonOneLine };

// The GBNF grammar (root rule `root`) of the documents `schema` accepts.
// `schema` is ordered: its properties' order is the order the grammar requires.
std::string JsonSchemaToGbnf(const nlohmann::ordered_json& schema,
                             JsonSyntax syntax = JsonSyntax::kJson);
// The rules (not `root`) of the values `schema` accepts, their names prefixed by `prefix`, and the
// name of the rule for the whole value: for grammars that embed several schemas (tool calls).
// The generic value rules (any JSON value, `json-*` or `gemma-*`) are left out and named by
// `uses_generic`: add GenericValueRules(syntax) once to the grammar.
struct SchemaRules {
  std::string rules;  // GBNF lines
  std::string value;  // the rule name of a value valid against the schema
  bool uses_generic = false;
};
SchemaRules JsonSchemaRules(const nlohmann::ordered_json& schema, JsonSyntax syntax,
                            const std::string& prefix);
// A schema given as JSON text (vLLM's structured_outputs.json, --json-schema files), in its
// member order. Throws JsonSchemaError (keyword "") if it is not JSON or too large.
nlohmann::ordered_json ParseJsonSchemaText(std::string_view schema_text);
// JsonSchemaToGbnf of ParseJsonSchemaText.
std::string JsonSchemaTextToGbnf(std::string_view schema_text,
                                 JsonSyntax syntax = JsonSyntax::kJson);
std::string GenericValueRules(JsonSyntax syntax);
// `response_format: json_object`: any JSON object.
std::string JsonObjectGbnf(JsonSyntax syntax = JsonSyntax::kJson);

}  // namespace tandem
