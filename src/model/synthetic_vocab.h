// A small, valid gemma4 BPE vocabulary of any size, for generated models.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tandem {

class GgufWriter;

struct SyntheticVocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;  // GGUF token types: 1 normal, 2 unknown, 3 control, 4 user, 6 byte
  std::vector<std::string> merges;
  int bos = 2, eos = 1, pad = 0, unk = 3;
};

// Needs n_vocab >= 512. Special tokens (Gemma 4 names, chat/tool/thinking markers) first, then
// the 256 byte tokens, printable ASCII, U+2581, merged pieces, "▁tN" fillers, and the seven media
// markup tokens (control tokens) last.
SyntheticVocab MakeSyntheticVocab(int n_vocab);
// Writes the tokenizer.ggml.* keys for `vocab`.
void WriteVocabToGguf(const SyntheticVocab& vocab, GgufWriter& writer);

}  // namespace tandem
