// The generic JSON value grammar (json_object mode, schema parts without constraints) in each
// JsonSyntax, and the whitespace each syntax allows around separators.
#include "grammar/json_value_rules.h"

#include <string>

#include "grammar/regex_to_gbnf.h"

namespace tandem {
namespace {

// Between tokens: nothing, a space, or a newline and an indent. Inlined at every use so that each
// copy has one return position (see compiled_grammar.h).
constexpr const char* kWs = R"(("" | " " | "\n" [ \t]{0,24}))";
}  // namespace

const char* BeforeSeparator(JsonSyntax syntax) {
  return syntax == JsonSyntax::kJson ? kWs : "\"\"";
}
const char* AfterSeparator(JsonSyntax syntax) {
  switch (syntax) {
    case JsonSyntax::kJson:
      return kWs;
    case JsonSyntax::kJsonOneLine:
      return "\" \"";
    case JsonSyntax::kGemmaToolCall:
      break;
  }
  return "\"\"";
}

namespace {

// Generic JSON values (shared rules; `json_object` mode and schemas without constraints).
constexpr const char* kJsonValueRules =
    R"(json-value ::= json-object | json-array | json-string | json-number | "true" | "false" | "null"
json-object ::= "{" WS ( json-string WS ":" WSA json-value ( WS "," WSA json-string WS ":" WSA json-value )* WS )? "}"
json-array ::= "[" WS ( json-value ( WS "," WSA json-value )* WS )? "]"
json-string ::= "\"" JCHAR* "\""
)";
constexpr const char* kJsonNumberRule =
    R"(json-number ::= "-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?
)";

// The same in Gemma 4's tool-call syntax. A key is bare (the chat parser reads a key up to ':'
// and stops at brackets, ',' and spaces). String text is anything without `<|` or `|>`, as a
// three-state automaton: after another character, after '<', after '|'.
constexpr const char* kGemmaValueRules =
    R"(gemma-value ::= gemma-object | gemma-array | gemma-string | json-number | "true" | "false" | "null"
gemma-object ::= "{" ( gemma-key ":" gemma-value ( "," gemma-key ":" gemma-value )* )? "}"
gemma-array ::= "[" ( gemma-value ( "," gemma-value )* )? "]"
gemma-string ::= "<|\"|>" gemma-text "<|\"|>"
gemma-key ::= [a-zA-Z0-9_.$@-]+
)";
constexpr const char* kGemmaTextRules =
    R"(gemma-text ::= "" | [^<|] gemma-text | "<" gemma-text-lt | "|" gemma-text-bar
gemma-text-lt ::= "" | [^<|] gemma-text | "<" gemma-text-lt
gemma-text-bar ::= "" | [^<|>] gemma-text | "<" gemma-text-lt | "|" gemma-text-bar
)";

std::string Expand(std::string text, JsonSyntax syntax) {
  auto replace = [&](const std::string& from, const std::string& to) {
    for (size_t p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size())) {
      text.replace(p, from.size(), to);
    }
  };
  replace("WSA", AfterSeparator(syntax));
  replace("WS", BeforeSeparator(syntax));
  replace("JCHAR", kJsonCharGbnf);
  return text;
}

}  // namespace

std::string GenericValueRules(JsonSyntax syntax) {
  if (syntax == JsonSyntax::kGemmaToolCall) {
    return std::string(kGemmaValueRules) + kGemmaTextRules + kJsonNumberRule;
  }
  return Expand(std::string(kJsonValueRules) + kJsonNumberRule, syntax);
}

std::string JsonObjectGbnf(JsonSyntax syntax) {
  return "root ::= json-object\n" + GenericValueRules(syntax);
}

}  // namespace tandem
