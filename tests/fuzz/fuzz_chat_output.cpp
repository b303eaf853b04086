// libFuzzer target: arbitrary bytes as a model's generated text, parsed by ChatOutputParser
// (content, the thought channel, Gemma 4 tool calls) once whole and once in pieces cut where the
// first byte's seed says. The parser promises the same result for every split: the two runs must
// give the same content, reasoning, tool calls (name and JSON arguments) and warnings, and every
// tool call's arguments must be a JSON object. Only tandem::Error may escape (Feed after Finish
// is never done here, so none should).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/chat_parser.h"

namespace {

struct Result {
  std::string content, reasoning;
  std::vector<std::string> calls;  // name, then arguments
  size_t warnings = 0;
};

void Add(const tandem::ParsedDelta& d, Result& r) {
  r.content += d.Content();
  r.reasoning += d.Reasoning();
  for (const tandem::ToolCall& c : d.ToolCalls()) {
    r.calls.push_back(c.name);
    r.calls.push_back(c.arguments);
    const nlohmann::json args = nlohmann::json::parse(c.arguments.empty() ? "{}" : c.arguments,
                                                      nullptr, /*allow_exceptions=*/false);
    if (!args.is_object()) std::abort();
  }
  r.warnings += d.warnings.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  uint32_t seed = data[0] * 2654435761u + 1;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  Result whole, pieces;
  {
    tandem::ChatOutputParser parser;
    Add(parser.Feed(text), whole);
    Add(parser.Finish(), whole);
  }
  {
    tandem::ChatOutputParser parser;
    for (size_t pos = 0; pos < text.size();) {
      seed = seed * 1664525u + 1013904223u;
      const size_t n = 1 + (seed >> 24) % 8;  // pieces of 1..8 bytes, as tokens come
      Add(parser.Feed(text.substr(pos, n)), pieces);
      pos += n;
    }
    Add(parser.Finish(), pieces);
  }
  if (whole.content != pieces.content || whole.reasoning != pieces.reasoning ||
      whole.calls != pieces.calls || whole.warnings != pieces.warnings) {
    std::abort();
  }
  return 0;
}
