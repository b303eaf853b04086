// Reads and writes a Vocab as the `tokenizer.ggml.*` keys of GGUF metadata.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gguf/gguf_metadata.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/vocab.h"

namespace tandem {

// The vocabulary stored in `metadata` (docs/formats.md § Tokenizer keys). Accepted tokenizers:
// `tokenizer.ggml.model = "gemma4"`, and Ollama's spelling `model = "llama"` with
// `pre = "gemma4"` and merges. As llama.cpp does for gemma4, add_bos is always on. Special ids that
// are out of range are dropped with a warning. Throws Error(kNotFound) if a required key is
// missing, Error(kUnsupported) for other tokenizer models, Error(kCorrupt)/(kInvalidArgument) for
// keys of the wrong type or length; messages start with metadata.source() and name the key.
Vocab VocabFromGgufMetadata(const GgufMetadata& metadata);

// Sets the keys that describe `vocab` as llama.cpp reads a gemma4 tokenizer: model and pre
// "gemma4", tokens, scores (if any), token_type, merges, the special ids that are present,
// add_bos_token, add_eos_token and add_space_prefix = false. Existing keys are overwritten.
void AddVocabToGgufMetadata(const Vocab& vocab, GgufMetadata& metadata);

// The same for a whole file: the vocabulary of `file` (VocabFromGgufMetadata of its metadata;
// works on vocab-only files without tensors), and the tokenizer keys added to a file being built.
Vocab LoadVocabFromGguf(const GgufFile& file);
void AddVocabToGguf(const Vocab& vocab, GgufWriter& writer);

// `tokenizer.ggml.suppress_tokens` (optional; an int32 array): ids never to be sampled (Hugging
// Face generation_config.json `suppress_tokens`). Empty when the key is absent. Throws
// Error(kCorrupt) naming the key for another type or an id outside [0, n_vocab).
std::vector<int32_t> SuppressTokensFromGguf(const GgufMetadata& metadata, int n_vocab);
// Sets the key (nothing when `ids` is empty).
void AddSuppressTokensToGguf(std::span<const int32_t> ids, GgufWriter& writer);

}  // namespace tandem
