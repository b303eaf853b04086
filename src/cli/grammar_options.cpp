#include "cli/grammar_options.h"

#include <fstream>
#include <iterator>

#include "base/error.h"
#include "grammar/grammar_cache.h"
#include "grammar/json_schema.h"
#include "speculative/grammar_constraint.h"

namespace tandem::cli {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, path + ": cannot open");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

GrammarConstraint LoadGrammarConstraint(const GrammarOptions& options, const Tokenizer& tokenizer,
                                        bool thinking) {
  if (options.empty()) return {};
  if (!options.grammar_file.empty() && !options.json_schema_file.empty()) {
    Fail(ErrorKind::kInvalidArgument, "--grammar-file and --json-schema are exclusive");
  }
  const bool schema = !options.json_schema_file.empty();
  if (options.json_one_line && !schema) {
    Fail(ErrorKind::kInvalidArgument, "--json-one-line needs --json-schema");
  }
  const std::string& path = schema ? options.json_schema_file : options.grammar_file;
  const std::string text = ReadFile(path);
  try {
    GrammarCache cache(tokenizer, 1);
    const JsonSyntax syntax = options.json_one_line ? JsonSyntax::kJsonOneLine : JsonSyntax::kJson;
    const ConstraintSource source =
        schema ? ConstraintSource::JsonSchema(ParseJsonSchemaText(text), syntax)
               : ConstraintSource::Gbnf(text);
    return MakeGrammarConstraint(cache.Compile(source), tokenizer, thinking);
  } catch (const Error& e) {
    Fail(e.kind(), path + ": " + e.what());
  }
}

}  // namespace tandem::cli
