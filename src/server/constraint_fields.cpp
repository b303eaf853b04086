#include "server/constraint_fields.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "grammar/json_schema.h"

namespace tandem::server {
namespace {

// `message` prefixed by `field` (unless it already starts with it).
[[noreturn]] void FailIn(const std::string& field, const std::string& message) {
  Fail(ErrorKind::kInvalidArgument,
       message.starts_with(field + ": ") ? message : field + ": " + message);
}

void SetConstraint(GenerationRequest& request, const std::string& field, ConstraintSource source) {
  if (!request.constraint_field.empty()) {
    Fail(ErrorKind::kInvalidArgument, field + " and " + request.constraint_field +
                                          " both constrain the output; send one of them");
  }
  request.constraint = std::move(source);
  request.constraint_field = field;
}

JsonSyntax Syntax(const GenerationRequest& request) {
  return request.json_one_line ? JsonSyntax::kJsonOneLine : JsonSyntax::kJson;
}

// The body's JSON keeps its member order, so properties are required in the schema's order.
ConstraintSource Schema(const Json& schema, const GenerationRequest& r) {
  return ConstraintSource::JsonSchema(schema, Syntax(r));
}

}  // namespace

void ParseStructuredOutputs(const Json& body, GenerationRequest& request) {
  const Json* so = FindField(body, "structured_outputs");
  if (so == nullptr) return;
  ExpectType(*so, "object", "structured_outputs");
  // vLLM's other constraint kinds and options: accepted only unset (null or false); a misspelt
  // or unknown member is refused like any other.
  static constexpr std::string_view kRead[] = {"json", "json_object", "disable_any_whitespace"};
  static constexpr std::string_view kWhy =
      "not supported by tandem (supported: json, json_object, disable_any_whitespace; GBNF "
      "grammars go in `grammar`)";
  constexpr auto unset = [](const Json& v) {
    return v.is_null() || (v.is_boolean() && !v.get<bool>());
  };
  static constexpr NoOpField kUnset[] = {
      {"regex", unset, kWhy},
      {"choice", unset, kWhy},
      {"grammar", unset, kWhy},
      {"structural_tag", unset, kWhy},
      {"whitespace_pattern", unset, kWhy},
      {"backend", unset, kWhy},
      {"disable_fallback", unset, kWhy},
      {"disable_additional_properties", unset, kWhy},
  };
  CheckFields(*so, {kRead}, {kUnset}, "structured_outputs");
  if (auto v = OptionalBool(*so, "disable_any_whitespace", "structured_outputs")) {
    request.json_one_line = *v;
  }
  if (const Json* schema = FindField(*so, "json")) {
    const std::string field = "structured_outputs.json";
    if (schema->is_string()) {  // vLLM also takes the schema as JSON text
      Json parsed;
      try {
        parsed = ParseJsonSchemaText(schema->get_ref<const std::string&>());
      } catch (const Error& e) {
        FailIn(field, e.what());
      }
      SetConstraint(request, field, Schema(parsed, request));
    } else {
      ExpectType(*schema, "object", field);
      SetConstraint(request, field, Schema(*schema, request));
    }
  }
  if (OptionalBool(*so, "json_object", "structured_outputs").value_or(false)) {
    SetConstraint(request, "structured_outputs.json_object",
                  ConstraintSource::JsonObject(Syntax(request)));
  }
}

namespace {

// A format object of OpenAI's kind: {type: "text" | "json_object" | "json_schema"}, the
// json_schema's {name, description, schema, strict} in `spec` (spec_field names it).
void ApplyFormat(const Json& format, const std::string& field, const Json* spec,
                 const std::string& spec_field, GenerationRequest& request) {
  const std::string type = OptionalString(format, "type", field).value_or("text");
  if (type == "text") return;
  if (type == "json_object") {
    SetConstraint(request, field, ConstraintSource::JsonObject(Syntax(request)));
    return;
  }
  if (type != "json_schema") {
    Fail(ErrorKind::kInvalidArgument, field +
                                          ".type: expected \"text\", \"json_object\" or "
                                          "\"json_schema\", got \"" +
                                          type + "\"");
  }
  if (spec == nullptr) spec = &RequiredField(format, "json_schema", field);
  ExpectType(*spec, "object", spec_field);
  (void)OptionalString(*spec, "name", spec_field);
  (void)OptionalString(*spec, "description", spec_field);
  (void)OptionalBool(*spec, "strict", spec_field);  // always enforced
  const Json* schema = FindField(*spec, "schema");
  // OpenAI's own default when the schema is left out: any JSON object. A schema's errors name
  // the field that held it (FieldPath(spec_field, "schema")) when it is compiled.
  if (schema == nullptr) {
    SetConstraint(request, field, ConstraintSource::JsonObject(Syntax(request)));
  } else {
    SetConstraint(request, field, Schema(*schema, request));
    request.constraint_schema_field = FieldPath(spec_field, "schema");
  }
}

}  // namespace

void ParseResponseFormat(const Json& body, GenerationRequest& request) {
  const Json* format = FindField(body, "response_format");
  if (format == nullptr) return;
  ExpectType(*format, "object", "response_format");
  RejectUnknownFields(*format, {"type", "json_schema"}, "response_format");
  const Json* spec = FindField(*format, "json_schema");
  if (spec != nullptr) {
    ExpectType(*spec, "object", "response_format.json_schema");
    RejectUnknownFields(*spec, {"name", "description", "schema", "strict"},
                        "response_format.json_schema");
  }
  ApplyFormat(*format, "response_format", spec, "response_format.json_schema", request);
}

void ParseTextFormat(const Json& text, GenerationRequest& request) {
  const Json* format = FindField(text, "format");
  if (format == nullptr) return;
  ExpectType(*format, "object", "text.format");
  RejectUnknownFields(*format, {"type", "name", "description", "schema", "strict"}, "text.format");
  ApplyFormat(*format, "text.format", format, "text.format", request);  // flat: no json_schema
}

void ParseGrammarFields(const Json& body, GenerationRequest& request) {
  if (const Json* grammar = FindField(body, "grammar")) {
    ExpectType(*grammar, "string", "grammar");
    if (!grammar->get_ref<const std::string&>().empty()) {
      SetConstraint(request, "grammar", ConstraintSource::Gbnf(grammar->get<std::string>()));
    }
  }
  if (const Json* schema = FindField(body, "json_schema")) {
    ExpectType(*schema, "object", "json_schema");
    SetConstraint(request, "json_schema", Schema(*schema, request));
  }
}

std::shared_ptr<CompiledGrammar> CompileConstraint(const GenerationRequest& request,
                                                   GrammarCache* grammars) {
  if (request.constraint.empty() && !request.tool_call_required) return nullptr;
  const std::string field = request.tool_call_required ? std::string("tool_choice")
                            : !request.constraint_schema_field.empty()
                                ? request.constraint_schema_field
                                : request.constraint_field;
  if (grammars == nullptr)
    Fail(ErrorKind::kInvalidArgument, field + ": this server compiles no grammars");
  if (request.tool_call_required && !request.constraint.empty()) {
    Fail(ErrorKind::kInvalidArgument, "tool_choice forces a tool call and " +
                                          request.constraint_field +
                                          " constrains the output too; send one of them");
  }
  try {
    return grammars->Compile(
        request.tool_call_required
            ? ConstraintSource::ToolCalls(request.tools, request.max_tool_calls == 1)
            : request.constraint);
  } catch (const Error& e) {
    FailIn(field, e.what());
  }
}

}  // namespace tandem::server
