// `--grammar-file F` / `--json-schema F [--json-one-line]` of `tandem run`: the constraint compiled
// against the target's vocabulary, or a clear error naming the file and (for a schema) the keyword
// and its JSON path.
#pragma once

#include <string>

#include "engine/request.h"
#include "tokenizer/tokenizer.h"

namespace tandem::cli {

struct GrammarOptions {
  std::string grammar_file;      // GBNF
  std::string json_schema_file;  // JSON Schema
  bool json_one_line = false;    // ... compiled with JsonSyntax::kJsonOneLine
  bool empty() const { return grammar_file.empty() && json_schema_file.empty(); }
};

// Compiles the constraint (none when `options` is empty). `thinking`: the model may think in
// its thought channel first, unconstrained. Throws Error(kInvalidArgument) for a bad grammar or
// schema, Error(kIo) for an unreadable file.
GrammarConstraint LoadGrammarConstraint(const GrammarOptions& options, const Tokenizer& tokenizer,
                                        bool thinking);

}  // namespace tandem::cli
