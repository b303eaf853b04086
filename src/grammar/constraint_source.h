// What a request's output is constrained to, as its API or the command line asked for it: a GBNF
// grammar, a JSON schema, any JSON object, or calls of given tools. The server's field readers
// (server/constraint_fields.h) and the CLI's options (cli/grammar_options.h) fill one in;
// GrammarCache::Compile turns it into the compiled grammar the engine runs. Grammar text exists
// only inside this folder: a schema or a tool list is compiled to GBNF here, and a repeated one
// is found in the cache by its source, before any of that work.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "grammar/json_schema.h"
#include "tokenizer/chat_types.h"

namespace tandem {

struct ConstraintSource {
  enum class Kind { kNone, kGbnf, kJsonSchema, kJsonObject, kToolCalls };
  Kind kind = Kind::kNone;
  std::string gbnf;                       // kGbnf
  nlohmann::ordered_json schema;          // kJsonSchema, in its member order
  JsonSyntax syntax = JsonSyntax::kJson;  // kJsonSchema, kJsonObject
  std::vector<ToolSpec> tools;            // kToolCalls
  bool single_call = false;               // kToolCalls: exactly one call

  bool empty() const { return kind == Kind::kNone; }

  static ConstraintSource Gbnf(std::string text);
  static ConstraintSource JsonSchema(nlohmann::ordered_json schema, JsonSyntax syntax);
  static ConstraintSource JsonObject(JsonSyntax syntax);
  static ConstraintSource ToolCalls(std::vector<ToolSpec> tools, bool single_call);
};

// The source's grammar as GBNF (root rule `root`). Throws what the schema and tool-call compilers
// throw (JsonSchemaError, Error(kInvalidArgument)).
std::string ConstraintGbnf(const ConstraintSource& source);

// Equal for sources that compile to the same grammar: what GrammarCache finds them by.
std::string ConstraintKey(const ConstraintSource& source);

}  // namespace tandem
