#include "grammar/json_schema.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <vector>

#include "grammar/gbnf_parser.h"
#include "grammar/integer_range.h"
#include "grammar/json_value_rules.h"
#include "grammar/regex_to_gbnf.h"

namespace tandem {

JsonSchemaError::JsonSchemaError(const std::string& keyword, const std::string& path,
                                 const std::string& why)
    : Error(ErrorKind::kInvalidArgument,
            "json_schema: " + (keyword.empty() ? std::string() : "'" + keyword + "' ") + "at " +
                (path.empty() ? std::string("/") : path) + ": " + why),
      keyword_(keyword),
      path_(path) {}

namespace {

// Ordered: properties must come in the schema's order, not sorted by name.
using json = nlohmann::ordered_json;

std::string Literal(const std::string& bytes) {
  std::string out = "\"";
  for (const char c : bytes) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (static_cast<uint8_t>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", static_cast<uint8_t>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonLiteral(const json& value) {
  return Literal(value.dump());
}

const std::set<std::string> kAnnotations = {"title",    "description", "default",  "examples",
                                            "$schema",  "$id",         "$comment", "deprecated",
                                            "readOnly", "writeOnly",   "strict"};
const std::set<std::string> kKeywords = {"type",
                                         "properties",
                                         "required",
                                         "additionalProperties",
                                         "items",
                                         "minItems",
                                         "maxItems",
                                         "enum",
                                         "const",
                                         "anyOf",
                                         "oneOf",
                                         "allOf",
                                         "$ref",
                                         "$defs",
                                         "definitions",
                                         "minLength",
                                         "maxLength",
                                         "pattern",
                                         "format",
                                         "minimum",
                                         "maximum",
                                         "exclusiveMinimum",
                                         "exclusiveMaximum"};

std::string Escape(const std::string& key) {
  std::string out;
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// A JSON value as the Gemma 4 tool-call syntax writes it (see the header).
std::string GemmaText(const json& v) {
  if (v.is_string()) return "<|\"|>" + v.get<std::string>() + "<|\"|>";
  std::string out;
  if (v.is_object()) {
    for (const auto& [key, value] : v.items())
      out += (out.empty() ? "" : ",") + key + ":" + GemmaText(value);
    return "{" + out + "}";
  }
  if (v.is_array()) {
    for (const json& e : v) out += (out.empty() ? "" : ",") + GemmaText(e);
    return "[" + out + "]";
  }
  return v.dump();
}

class SchemaCompiler {
 public:
  SchemaCompiler(const json& root, JsonSyntax syntax, std::string prefix)
      : root_(root),
        gemma_(syntax == JsonSyntax::kGemmaToolCall),
        ws_(BeforeSeparator(syntax)),
        ws_after_(AfterSeparator(syntax)),
        prefix_(std::move(prefix)) {}

  SchemaRules Compile() {
    SchemaRules out;
    out.value = Ref("#", "");
    for (const auto& [name, body] : rules_) {
      out.rules += name + " ::= " + body + "\n";
      if (out.rules.size() > kMaxGrammarTextBytes) {
        Throw("", "",
              "the schema compiles to a grammar over " + std::to_string(kMaxGrammarTextBytes) +
                  " bytes");
      }
    }
    out.uses_generic = uses_generic_;
    return out;
  }

 private:
  [[noreturn]] static void Throw(const std::string& keyword, const std::string& path,
                                 const std::string& why) {
    throw JsonSchemaError(keyword, path, why);
  }

  // An expression that is written more than once (array items, optional members): a rule of its
  // own when it is long, so that nesting grows the grammar linearly, not exponentially. (Short
  // ones stay inline: each copy keeps a single return position, see compiled_grammar.h.)
  std::string Hoist(std::string body) {
    if (body.size() <= 256) return body;
    std::string name = prefix_ + "part-" + std::to_string(rules_.size());
    rules_[name] = std::move(body);
    return name;
  }

  std::string Any() {
    uses_generic_ = true;
    return gemma_ ? "gemma-value" : "json-value";
  }
  // A string of any JSON characters: one shared rule, so its positions' token tables are computed
  // once (inlined at each property, every copy walks nearly the whole vocabulary trie again;
  // bench/README.md § Kernel choices).
  // Tokens that run past its closing quote are checked against the real stack at mask time
  // (memoized per state).
  std::string FreeString() {
    const std::string name = prefix_ + "string";
    if (!rules_.contains(name))
      rules_[name] = "\"\\\"\" " + std::string(kJsonCharGbnf) + "{0,} \"\\\"\"";
    return name;
  }
  std::string Key() {
    uses_generic_ = true;
    return gemma_ ? "gemma-key" : "json-string";
  }
  std::string ValueLiteral(const json& value) const {
    return Literal(gemma_ ? GemmaText(value) : value.dump());
  }

  // The rule for the schema at `ref` (compiled once; recursion through refs is allowed).
  std::string Ref(const std::string& ref, const std::string& path) {
    if (const auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
    const json* target = &root_;
    std::string target_path;
    if (ref != "#") {
      std::string rest;
      if (ref.rfind("#/$defs/", 0) == 0) {
        rest = ref.substr(8);
        target_path = "/$defs";
        target = root_.contains("$defs") ? &root_["$defs"] : nullptr;
      } else if (ref.rfind("#/definitions/", 0) == 0) {
        rest = ref.substr(14);
        target_path = "/definitions";
        target = root_.contains("definitions") ? &root_["definitions"] : nullptr;
      } else {
        Throw("$ref", path,
              "only \"#\", \"#/$defs/NAME\" and \"#/definitions/NAME\" are supported");
      }
      if (target == nullptr || !target->is_object() || !target->contains(rest)) {
        Throw("$ref", path, "\"" + ref + "\" does not exist");
      }
      target = &(*target)[rest];
      target_path += "/" + Escape(rest);
    }
    std::string name = prefix_ + "ref";
    for (const char c : ref) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    name += "-" + std::to_string(ref_rules_.size());
    ref_rules_[ref] = name;
    rules_[name] = "";  // reserves the name while the body compiles
    rules_[name] = Visit(*target, target_path, 0);
    return name;
  }

  std::string Visit(const json& s, const std::string& path, int depth) {
    if (depth > kMaxSchemaDepth)
      Throw("", path, "schema nested deeper than " + std::to_string(kMaxSchemaDepth));
    if (s.is_boolean()) {
      if (s.get<bool>()) return Any();
      Throw("", path, "the schema `false` accepts nothing");
    }
    if (!s.is_object()) Throw("", path, "a schema must be an object or a boolean");
    for (const auto& [key, value] : s.items()) {
      if (kAnnotations.count(key) == 0 && kKeywords.count(key) == 0) {
        Throw(key, path + "/" + Escape(key), "unsupported keyword");
      }
    }
    if (s.contains("$ref")) {
      for (const auto& [key, value] : s.items()) {
        if (key != "$ref" && key != "$defs" && key != "definitions" &&
            kAnnotations.count(key) == 0) {
          Throw(key, path + "/" + Escape(key), "keywords beside $ref are not supported");
        }
      }
      if (!s["$ref"].is_string()) Throw("$ref", path + "/$ref", "must be a string");
      return Ref(s["$ref"].get<std::string>(), path + "/$ref");
    }
    if (s.contains("const")) return ValueLiteral(s["const"]);
    if (s.contains("enum")) {
      const json& values = s["enum"];
      if (!values.is_array() || values.empty())
        Throw("enum", path + "/enum", "must be a non-empty array");
      std::string out = "(";
      for (size_t i = 0; i < values.size(); ++i) out += (i ? " | " : "") + ValueLiteral(values[i]);
      return out + ")";
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      const json& list = s[key];
      if (!list.is_array() || list.empty())
        Throw(key, path + "/" + key, "must be a non-empty array");
      std::string out = "(";
      for (size_t i = 0; i < list.size(); ++i) {
        out += (i ? " | " : "") +
               Visit(list[i], path + "/" + key + "/" + std::to_string(i), depth + 1);
      }
      return out + ")";
    }
    if (s.contains("allOf")) {
      const json& list = s["allOf"];
      if (!list.is_array() || list.size() != 1) {
        Throw("allOf", path + "/allOf", "only allOf with one schema is supported");
      }
      return Visit(list[0], path + "/allOf/0", depth + 1);
    }
    if (!s.contains("type")) {
      if (s.contains("properties") || s.contains("additionalProperties"))
        return Object(s, path, depth);
      if (s.contains("items")) return Array(s, path, depth);
      return Any();
    }
    const json& type = s["type"];
    if (type.is_array()) {
      if (type.empty()) Throw("type", path + "/type", "must not be empty");
      std::string out = "(";
      for (size_t i = 0; i < type.size(); ++i) {
        if (!type[i].is_string())
          Throw("type", path + "/type/" + std::to_string(i), "must be a string");
        out += (i ? " | " : "") + OfType(type[i].get<std::string>(), s, path, depth);
      }
      return out + ")";
    }
    if (!type.is_string()) Throw("type", path + "/type", "must be a string or an array of strings");
    return OfType(type.get<std::string>(), s, path, depth);
  }

  std::string OfType(const std::string& type, const json& s, const std::string& path, int depth) {
    if (type == "object") return Object(s, path, depth);
    if (type == "array") return Array(s, path, depth);
    if (type == "string") return String(s, path);
    if (type == "integer") return Integer(s, path);
    if (type == "number") return Number(s, path);
    if (type == "boolean") return "(\"true\" | \"false\")";
    if (type == "null") return "\"null\"";
    Throw("type", path + "/type", "unknown type \"" + type + "\"");
  }

  static double NumberField(const json& s, const char* key, const std::string& path) {
    if (!s[key].is_number()) Throw(key, path + "/" + key, "must be a number");
    return s[key].get<double>();
  }

  std::string Object(const json& s, const std::string& path, int depth) {
    std::vector<std::string> required_names;
    if (s.contains("required")) {
      if (!s["required"].is_array()) Throw("required", path + "/required", "must be an array");
      for (const json& r : s["required"]) {
        if (!r.is_string()) Throw("required", path + "/required", "must hold strings");
        required_names.push_back(r.get<std::string>());
      }
    }
    std::vector<std::string> required, optional;  // "key": value members
    const json empty = json::object();
    const json& props = s.contains("properties") ? s["properties"] : empty;
    if (!props.is_object()) Throw("properties", path + "/properties", "must be an object");
    for (const auto& [key, sub] : props.items()) {
      if (gemma_ && (key.empty() || key.find_first_of(":{}[], \t\n\r<|\"") != std::string::npos)) {
        Throw("properties", path + "/properties/" + Escape(key),
              "a tool-call argument name must be a bare word (no spaces, quotes, brackets, "
              "',', ':', '<' or '|')");
      }
      const std::string member = (gemma_ ? Literal(key) : JsonLiteral(key)) + " " + ws_ +
                                 " \":\" " + ws_after_ + " " +
                                 Visit(sub, path + "/properties/" + Escape(key), depth + 1);
      const bool req =
          std::find(required_names.begin(), required_names.end(), key) != required_names.end();
      (req ? required : optional).push_back(member);
    }
    for (const std::string& r : required_names) {
      if (!props.contains(r))
        Throw("required", path + "/required", "\"" + r + "\" is not in properties");
    }
    std::string extra;  // one additional member, or empty if none are allowed
    const bool has_props = s.contains("properties");
    if (s.contains("additionalProperties")) {
      const json& ap = s["additionalProperties"];
      if (!(ap.is_boolean() && !ap.get<bool>())) {
        extra = Key() + " " + ws_ + " \":\" " + ws_after_ + " " +
                (ap.is_boolean() ? Any() : Visit(ap, path + "/additionalProperties", depth + 1));
      }
    } else if (!has_props) {
      extra = Key() + " " + ws_ + " \":\" " + ws_after_ + " " + Any();
    }
    const std::string sep = ws_ + " \",\" " + ws_after_ + " ";
    std::string body;
    if (!required.empty()) {
      for (size_t i = 0; i < required.size(); ++i) body += (i ? " " + sep : "") + required[i];
      for (const std::string& o : optional) body += " (" + sep + o + ")?";
      if (!extra.empty()) body += " (" + sep + extra + ")*";
    } else {
      // The first member present is unprefixed: chain(i) ::= m_i rest(i) | chain(i+1).
      std::vector<std::string> members;
      for (const std::string& o : optional) members.push_back(Hoist(o));
      if (!extra.empty()) members.push_back(Hoist(extra));
      std::string chain;
      for (size_t i = members.size(); i-- > 0;) {
        std::string rest;
        for (size_t j = i + 1; j < members.size(); ++j) {
          const bool repeat = !extra.empty() && j + 1 == members.size();
          rest += " (" + sep + members[j] + ")" + (repeat ? "*" : "?");
        }
        const bool repeat_self = !extra.empty() && i + 1 == members.size();
        std::string alt = members[i] + rest;
        if (repeat_self) alt = members[i] + " (" + sep + members[i] + ")*";
        chain = chain.empty() ? "(" + alt + ")" : "(" + alt + " | " + chain + ")";
      }
      body = chain.empty() ? "" : chain + "?";
    }
    return "(\"{\" " + ws_ + " " + (body.empty() ? "" : "(" + body + ") " + ws_ + " ") + "\"}\")";
  }

  std::string Array(const json& s, const std::string& path, int depth) {
    const std::string item =
        Hoist(s.contains("items") ? Visit(s["items"], path + "/items", depth + 1) : Any());
    int64_t min = 0, max = -1;
    if (s.contains("minItems")) {
      if (!s["minItems"].is_number_unsigned())
        Throw("minItems", path + "/minItems", "must be a non-negative integer");
      min = s["minItems"].get<int64_t>();
    }
    if (s.contains("maxItems")) {
      if (!s["maxItems"].is_number_unsigned())
        Throw("maxItems", path + "/maxItems", "must be a non-negative integer");
      max = s["maxItems"].get<int64_t>();
    }
    if (min > 1000 || max > 1000)
      Throw(min > 1000 ? "minItems" : "maxItems", path, "above 1000 is not supported");
    if (max >= 0 && max < min) Throw("maxItems", path + "/maxItems", "is below minItems");
    const std::string sep = ws_ + " \",\" " + ws_after_ + " ";
    std::string body;
    if (max != 0) {
      const int64_t rest_min = std::max<int64_t>(0, min - 1);
      std::string reps =
          "{" + std::to_string(rest_min) + "," + (max < 0 ? "" : std::to_string(max - 1)) + "}";
      body = "(" + item + " (" + sep + item + ")" + reps + " " + ws_ + ")";
      if (min == 0) body += "?";
    }
    return "(\"[\" " + ws_ + " " + body + " \"]\")";
  }

  std::string String(const json& s, const std::string& path) {
    std::string content;
    if (s.contains("format")) {
      if (!s["format"].is_string()) Throw("format", path + "/format", "must be a string");
      const std::string f = s["format"].get<std::string>();
      content = Format(f, path);
      if (s.contains("pattern") || s.contains("minLength") || s.contains("maxLength")) {
        Throw("format", path + "/format",
              "format together with pattern or lengths is not supported");
      }
    } else if (s.contains("pattern")) {
      if (!s["pattern"].is_string()) Throw("pattern", path + "/pattern", "must be a string");
      if (gemma_) {
        Throw("pattern", path + "/pattern",
              "not supported in tool-call arguments (a pattern's characters are JSON-escaped)");
      }
      if (s.contains("minLength") || s.contains("maxLength")) {
        Throw("pattern", path + "/pattern", "pattern together with lengths is not supported");
      }
      try {
        content = RegexToGbnf(s["pattern"].get<std::string>());
      } catch (const Error& e) {
        Throw("pattern", path + "/pattern", e.what());
      }
    } else {
      int64_t min = 0, max = -1;
      if (s.contains("minLength")) {
        if (!s["minLength"].is_number_unsigned())
          Throw("minLength", path + "/minLength", "must be a non-negative integer");
        min = s["minLength"].get<int64_t>();
      }
      if (s.contains("maxLength")) {
        if (!s["maxLength"].is_number_unsigned())
          Throw("maxLength", path + "/maxLength", "must be a non-negative integer");
        max = s["maxLength"].get<int64_t>();
      }
      if (min > 1000 || max > 1000)
        Throw(min > 1000 ? "minLength" : "maxLength", path, "above 1000 is not supported");
      if (max >= 0 && max < min) Throw("maxLength", path + "/maxLength", "is below minLength");
      const bool free = min == 0 && max < 0;
      if (free && !gemma_) return FreeString();
      if (gemma_ && free) uses_generic_ = true;
      content = gemma_ && free
                    ? std::string("gemma-text")
                    : std::string(gemma_ ? "[^<|]" : kJsonCharGbnf) + "{" + std::to_string(min) +
                          "," + (max < 0 ? "" : std::to_string(max)) + "}";
    }
    const std::string quote = gemma_ ? "\"<|\\\"|>\"" : "\"\\\"\"";
    return "(" + quote + " " + content + " " + quote + ")";
  }

  static std::string Format(const std::string& f, const std::string& path) {
    const std::string d28 = R"(("0" [1-9] | "1" [0-9] | "2" [0-8]))";
    const std::string d30 = "(" + d28 + R"( | "29" | "30"))";
    const std::string d31 = "(" + d30 + R"( | "31"))";
    const std::string leap_tail = R"(("0" [48] | [2468] [048] | [13579] [26]))";
    const std::string date = R"(([0-9]{4} "-" (("0" [13578] | "1" [02]) "-" )" + d31 +
                             R"( | ("0" [469] | "11") "-" )" + d30 + R"( | "02-" )" + d28 +
                             R"() | ([0-9]{2} )" + leap_tail + " | " + leap_tail +
                             R"( "00") "-02-29"))";
    const std::string hh = R"(([01] [0-9] | "2" [0-3]))";
    const std::string time = "(" + hh +
                             R"( ":" [0-5] [0-9] ":" [0-5] [0-9] ("." [0-9]{1,9})? ("Z" | [+-] )" +
                             hh + R"( ":" [0-5] [0-9])))";
    if (f == "date") return date;
    if (f == "time") return time;
    if (f == "date-time") return "(" + date + " \"T\" " + time + ")";
    if (f == "uuid") {
      return R"(([0-9a-f]{8} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{4} "-" [0-9a-f]{12}))";
    }
    if (f == "email") {
      return R"(([a-zA-Z0-9_+-]+ ("." [a-zA-Z0-9_+-]+)* "@" ([a-zA-Z0-9] ([a-zA-Z0-9-]* [a-zA-Z0-9])? ".")+ [a-zA-Z0-9] ([a-zA-Z0-9-]* [a-zA-Z0-9])?))";
    }
    Throw("format", path + "/format", "unsupported format \"" + f + "\"");
  }

  std::string Integer(const json& s, const std::string& path) {
    std::optional<int64_t> lo, hi;
    auto bound = [&](const char* key, bool is_min, bool exclusive) {
      if (!s.contains(key)) return;
      const double v = NumberField(s, key, path);
      if (std::fabs(v) > 1e15) Throw(key, path + "/" + key, "bounds beyond 1e15 are not supported");
      int64_t b = is_min ? static_cast<int64_t>(std::ceil(v)) : static_cast<int64_t>(std::floor(v));
      if (exclusive && static_cast<double>(b) == v) b += is_min ? 1 : -1;
      if (is_min)
        lo = lo ? std::max(*lo, b) : b;
      else
        hi = hi ? std::min(*hi, b) : b;
    };
    bound("minimum", true, false);
    bound("exclusiveMinimum", true, true);
    bound("maximum", false, false);
    bound("exclusiveMaximum", false, true);
    if (lo && hi && *lo > *hi) Throw("maximum", path, "the integer range is empty");
    return IntegerRangeGbnf(lo, hi);
  }

  std::string Number(const json& s, const std::string& path) {
    const std::string frac = R"(("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?)";
    bool non_negative = false;
    for (const char* key : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"}) {
      if (!s.contains(key)) continue;
      if (std::string(key) == "minimum" && NumberField(s, key, path) == 0) {
        non_negative = true;
        continue;
      }
      Throw(key, path + "/" + key, "number bounds other than minimum 0 are not supported");
    }
    // A non-negative number: no sign, and no negative exponent issue (the mantissa is >= 0).
    return std::string("(") + (non_negative ? "" : "\"-\"? ") + R"(("0" | [1-9] [0-9]{0,15}) )" +
           frac + ")";
  }

  const json& root_;
  const bool gemma_;
  const std::string ws_, ws_after_;  // inside brackets and before a separator; after one
  const std::string prefix_;
  std::map<std::string, std::string> rules_;
  std::map<std::string, std::string> ref_rules_;
  bool uses_generic_ = false;
};

}  // namespace

SchemaRules JsonSchemaRules(const json& schema, JsonSyntax syntax, const std::string& prefix) {
  return SchemaCompiler(schema, syntax, prefix).Compile();
}

std::string JsonSchemaToGbnf(const json& schema, JsonSyntax syntax) {
  const SchemaRules r = JsonSchemaRules(schema, syntax, "");
  return "root ::= " + r.value + "\n" + r.rules + (r.uses_generic ? GenericValueRules(syntax) : "");
}

json ParseJsonSchemaText(std::string_view schema_text) {
  if (schema_text.size() > kMaxSchemaBytes) {
    throw JsonSchemaError("", "",
                          "schema is " + std::to_string(schema_text.size()) +
                              " bytes, the limit is " + std::to_string(kMaxSchemaBytes));
  }
  try {
    return json::parse(schema_text, nullptr, true, false);
  } catch (const json::exception& e) {
    throw JsonSchemaError("", "", std::string("not valid JSON: ") + e.what());
  }
}

std::string JsonSchemaTextToGbnf(std::string_view schema_text, JsonSyntax syntax) {
  return JsonSchemaToGbnf(ParseJsonSchemaText(schema_text), syntax);
}

}  // namespace tandem
