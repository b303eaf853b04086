#include "grammar/tool_call_grammar.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "grammar/json_schema.h"

namespace tandem {

std::string ToolCallGbnf(const std::vector<ToolSpec>& tools, bool single) {
  if (tools.empty()) Fail(ErrorKind::kInvalidArgument, "forced tool use needs at least one tool");
  std::string calls, rules;
  bool generic = false;
  for (size_t i = 0; i < tools.size(); ++i) {
    const ToolSpec& tool = tools[i];
    // What ParseToolCallText accepts as a name, and what a GBNF literal can carry plainly.
    if (tool.name.empty() || tool.name.find_first_of("{}<>\"\\ \t\r\n") != std::string::npos) {
      Fail(ErrorKind::kInvalidArgument, "tools[" + std::to_string(i) + "]: the name '" + tool.name +
                                            "' cannot be written in a Gemma 4 tool call");
    }
    const nlohmann::ordered_json schema =
        tool.parameters.is_null() ? nlohmann::ordered_json{{"type", "object"}} : tool.parameters;
    std::string prefix(1, 't');  // (GCC 12 -Wrestrict misfires on "t" + to_string(i))
    prefix += std::to_string(i);
    prefix += '-';
    SchemaRules args;
    try {
      args = JsonSchemaRules(schema, JsonSyntax::kGemmaToolCall, prefix);
    } catch (const JsonSchemaError& e) {
      Fail(ErrorKind::kInvalidArgument,
           "tools[" + std::to_string(i) + "] ('" + tool.name + "') parameters: " + e.what());
    }
    rules += args.rules;
    generic = generic || args.uses_generic;
    calls += std::string(calls.empty() ? "" : " | ") + "(\"" + tool.name + "\" " + args.value + ")";
  }
  std::string out = "root ::= " + std::string(single ? "call" : "call+") + "\n";
  out += "call ::= \"<|tool_call>call:\" (" + calls + ") \"<tool_call|>\"\n";
  out += rules;
  if (generic) out += GenericValueRules(JsonSyntax::kGemmaToolCall);
  return out;
}

}  // namespace tandem
