// Reads a Hugging Face tokenizer.json (+ tokenizer_config.json) into a Vocab, for conversion.
#pragma once

#include <string>
#include <string_view>

#include "tokenizer/vocab.h"

namespace tandem {

// Builds the Gemma 4 style BPE vocabulary described by `tokenizer_json` (the text of a
// tokenizer.json). `tokenizer_config_json` (the text of tokenizer_config.json, or empty) names
// the bos/eos/pad/unk tokens and add_bos/add_eos; without it they come from the post-processor
// and the conventional texts <bos>, <eos>, <pad>, model.unk_token.
//
// Token types: `<0xHH>` → byte; added tokens marked special → control (unknown for the unk
// token); other added tokens → user-defined, so they are matched whole before BPE like HF does;
// the seven Gemma 4 markup tokens (<|channel>, <|tool_call>, <|"|>, ...) → user-defined; the rest
// normal. Ids missing from both vocab and added_tokens become unused "[PADn]" tokens. Merges given
// as [left, right] pairs are stored as "left right"; pairs with a space inside a half can never
// apply (spaces are escaped to U+2581) and are dropped with a warning. Scores are -1000
// placeholders, as llama.cpp's converter writes.
//
// Throws Error(kCorrupt) for malformed JSON or fields (message starts with `source` and names the
// field), Error(kUnsupported) for tokenizers this BPE cannot reproduce (not BPE, no space escaping,
// space prefix, ignore_merges, subword affixes).
Vocab VocabFromTokenizerJson(std::string_view tokenizer_json,
                             std::string_view tokenizer_config_json, const std::string& source);

// Reads the tokenizer.json at `path` and the tokenizer_config.json beside it, if there is one.
// Throws Error(kIo) if `path` cannot be read, plus the errors above.
Vocab LoadVocabFromTokenizerJson(const std::string& path);

}  // namespace tandem
