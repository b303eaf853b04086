// A tokenized prompt with images: each image placeholder token becomes the image's markup and
// soft-token rows (docs/gemma4.md § Media rows).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"

namespace tandem {

class Tokenizer;

// The vocabulary's image markup: `<|image>`, `<image|>` and the placeholder `<|image|>`.
struct ImageTokens {
  int32_t open = -1, close = -1, placeholder = -1;
};
// Throws Error(kUnsupported) when the vocabulary lacks one of them.
ImageTokens FindImageTokens(const Tokenizer& tokenizer);

// llama.cpp's media marker in raw prompts.
inline constexpr std::string_view kMediaMarker = "<__media__>";
// Turns each kMediaMarker of `prompt` into the image placeholder; returns how many there were.
int ReplaceMediaMarkers(std::string& prompt);

// Writes `tokens` into request.prompt with the i-th placeholder token expanded into open,
// images[i].count placeholder rows and close, and images[i] (its begin set) into request.media.
// Throws Error(kInvalidArgument) when the placeholders and the images differ in number.
void ExpandImages(const std::vector<int32_t>& tokens, std::vector<PromptMedia> images,
                  const ImageTokens& markup, EngineRequest& request);

}  // namespace tandem
