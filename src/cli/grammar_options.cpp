#include "cli/grammar_options.h"

#include <fstream>
#include <iterator>
#include <memory>

#include "base/error.h"
#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema.h"
#include "grammar/token_vocabulary.h"
#include "tokenizer/chat_format.h"

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
  GrammarConstraint c;
  if (options.empty()) return c;
  if (!options.grammar_file.empty() && !options.json_schema_file.empty()) {
    Fail(ErrorKind::kInvalidArgument, "--grammar-file and --json-schema are exclusive");
  }
  const bool schema = !options.json_schema_file.empty();
  const std::string& path = schema ? options.json_schema_file : options.grammar_file;
  const std::string text = ReadFile(path);
  try {
    const std::string gbnf = schema ? JsonSchemaTextToGbnf(text) : text;
    c.grammar = std::make_shared<CompiledGrammar>(ParseGbnf(gbnf),
                                                  TokenVocabulary::FromTokenizer(tokenizer));
    // `tokenizer` outlives the run that uses this grammar.
    c.grammar->SetEncoder([&tokenizer](std::string_view text) {
      return tokenizer.Encode(text, {.add_special = false, .parse_special = false});
    });
  } catch (const Error& e) {
    Fail(e.kind(), path + ": " + e.what());
  }
  if (thinking) {
    c.thought_open = tokenizer.FindToken(chat_marker::kChannelOpen);
    c.thought_close = tokenizer.FindToken(chat_marker::kChannelClose);
    if (c.thought_open < 0 || c.thought_close < 0) c.thought_open = c.thought_close = -1;
  }
  return c;
}

}  // namespace tandem::cli
