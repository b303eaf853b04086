// Builds a prompt with media: each image placeholder token of a tokenized prompt becomes the
// image's markup and soft-token rows (docs/gemma4.md § Media rows).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/request.h"

namespace tandem {

class Tokenizer;

// An encoded image: its soft-token rows (tokens x n_embd floats) and its content key (a hash of
// the pixels and of how they were prepared).
struct EncodedMedia {
  uint64_t key = 0;
  int32_t tokens = 0;
  std::shared_ptr<const std::vector<float>> embeddings;
};

// The vocabulary's image markup: `<|image>`, `<image|>` and the placeholder `<|image|>`.
struct ImageTokens {
  int32_t open = -1, close = -1, placeholder = -1;
};
// Throws Error(kUnsupported) when the vocabulary lacks one of them.
ImageTokens FindImageTokens(const Tokenizer& tokenizer);

// Expands the i-th placeholder token of `tokens` into open, images[i].tokens placeholder rows
// whose embeddings are images[i]'s, and close, into request.prompt and request.media. Throws
// Error(kInvalidArgument) when the placeholders and the images differ in number.
void ExpandImages(const std::vector<int32_t>& tokens, const std::vector<EncodedMedia>& images,
                  const ImageTokens& markup, EngineRequest& request);

}  // namespace tandem
