#include "grammar/constraint_source.h"

#include <utility>

#include "grammar/tool_call_grammar.h"

namespace tandem {

ConstraintSource ConstraintSource::Gbnf(std::string text) {
  ConstraintSource s;
  s.kind = Kind::kGbnf;
  s.gbnf = std::move(text);
  return s;
}

ConstraintSource ConstraintSource::JsonSchema(nlohmann::ordered_json schema, JsonSyntax syntax) {
  ConstraintSource s;
  s.kind = Kind::kJsonSchema;
  s.schema = std::move(schema);
  s.syntax = syntax;
  return s;
}

ConstraintSource ConstraintSource::JsonObject(JsonSyntax syntax) {
  ConstraintSource s;
  s.kind = Kind::kJsonObject;
  s.syntax = syntax;
  return s;
}

ConstraintSource ConstraintSource::ToolCalls(std::vector<ToolSpec> tools, bool single_call) {
  ConstraintSource s;
  s.kind = Kind::kToolCalls;
  s.tools = std::move(tools);
  s.single_call = single_call;
  return s;
}

std::string ConstraintGbnf(const ConstraintSource& source) {
  switch (source.kind) {
    case ConstraintSource::Kind::kGbnf:
      return source.gbnf;
    case ConstraintSource::Kind::kJsonSchema:
      return JsonSchemaToGbnf(source.schema, source.syntax);
    case ConstraintSource::Kind::kJsonObject:
      return JsonObjectGbnf(source.syntax);
    case ConstraintSource::Kind::kToolCalls:
      return ToolCallGbnf(source.tools, source.single_call);
    case ConstraintSource::Kind::kNone:
      break;
  }
  Fail(ErrorKind::kInvalidArgument, "no constraint to compile");
}

std::string ConstraintKey(const ConstraintSource& source) {
  // The kind and the syntax first, then what they read: no two sources share a key.
  std::string key = std::to_string(static_cast<int>(source.kind)) + ":" +
                    std::to_string(static_cast<int>(source.syntax)) + ":";
  switch (source.kind) {
    case ConstraintSource::Kind::kGbnf:
      return key + source.gbnf;
    case ConstraintSource::Kind::kJsonSchema:
      return key + source.schema.dump();
    case ConstraintSource::Kind::kToolCalls: {
      nlohmann::ordered_json tools = nlohmann::ordered_json::array();
      for (const ToolSpec& t : source.tools) tools.push_back({t.name, t.parameters});
      return key + (source.single_call ? "1:" : "0:") + tools.dump();
    }
    case ConstraintSource::Kind::kJsonObject:
    case ConstraintSource::Kind::kNone:
      break;
  }
  return key;
}

}  // namespace tandem
