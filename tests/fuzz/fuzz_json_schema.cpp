// libFuzzer: JSON Schema text -> GBNF -> Grammar, in the JSON syntax and in the Gemma 4 tool-call
// dialect (as a tool's parameters). Must compile or throw tandem::Error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema.h"
#include "grammar/tool_call_grammar.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    tandem::ParseGbnf(tandem::JsonSchemaTextToGbnf(text));
  } catch (const tandem::Error&) {
  }
  try {
    const nlohmann::json schema = nlohmann::json::parse(text, nullptr, false);
    if (schema.is_discarded() || text.size() > tandem::kMaxSchemaBytes) return 0;
    tandem::ParseGbnf(tandem::ToolCallGbnf({{"f", "", schema}}, size % 2 == 0));
  } catch (const tandem::Error&) {
  }
  return 0;
}
