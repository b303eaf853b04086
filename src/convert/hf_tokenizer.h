// The tokenizer of a Hugging Face checkpoint directory (tokenizer.json, tokenizer_config.json,
// chat templates) as the `tokenizer.*` keys llama.cpp's converter writes for Gemma 4
// (docs/formats.md § Hugging Face tokenizer files; docs/gemma4.md § Tokenizer).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tokenizer/vocab.h"

namespace tandem {

class GgufWriter;

struct HfTokenizer {
  Vocab vocab;
  // Chat templates by name; "default" is `tokenizer.chat_template`, any other name N becomes
  // `tokenizer.chat_template.N` (listed in `tokenizer.chat_templates`). Empty if none.
  std::vector<std::pair<std::string, std::string>> chat_templates;
};

// Reads DIR/tokenizer.json (required: Error(kNotFound) if absent) and, when present,
// tokenizer_config.json and the chat template: chat_template.jinja, else chat_template.json, else
// tokenizer_config.json's `chat_template` (a string, or a list of {name, template}). Special ids
// missing from the tokenizer files fall back to `fallback_bos/eos/pad` (config.json's ids; -1 for
// none). Throws the errors of VocabFromTokenizerJson, Error(kCorrupt) for malformed template
// files.
HfTokenizer LoadHfTokenizer(const std::string& dir, int fallback_bos, int fallback_eos,
                            int fallback_pad);

// Sets the tokenizer keys: the vocabulary (AddVocabToGguf, without `tokenizer.ggml.pre`, which
// llama.cpp's converter leaves out for gemma4) and the chat templates.
void AddHfTokenizerToGguf(const HfTokenizer& tokenizer, GgufWriter& writer);

}  // namespace tandem
