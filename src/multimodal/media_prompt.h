// A tokenized prompt with media: each image or audio placeholder token becomes the item's markup
// and soft-token rows (docs/gemma4.md § Media rows).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/request.h"

namespace tandem {

class Tokenizer;

// A modality's markup in the vocabulary: its open and close tokens and the placeholder.
struct MediaTokens {
  int32_t open = -1, close = -1, placeholder = -1;
};
// `<|image>`, `<image|>`, `<|image|>`. Throws Error(kUnsupported) when the vocabulary lacks one.
MediaTokens FindImageTokens(const Tokenizer& tokenizer);
// `<|audio>`, `<audio|>`, `<|audio|>`, likewise.
MediaTokens FindAudioTokens(const Tokenizer& tokenizer);

// llama.cpp's media marker in raw prompts.
inline constexpr std::string_view kMediaMarker = "<__media__>";
// Turns the i-th kMediaMarker of `prompt` into placeholders[i] (the image placeholder past the
// end of the list); returns how many markers there were.
int ReplaceMediaMarkers(std::string& prompt, std::span<const std::string_view> placeholders = {});

// The items of one modality, in prompt order, and its markup; `noun` names it in errors.
struct MediaList {
  MediaTokens markup;
  std::vector<PromptMedia> items;
  std::string noun = "image";
};

// Writes `tokens` into request.prompt with the i-th placeholder of each list expanded into its
// open token, items[i].count placeholder rows and its close token, and the items (their begin
// set) into request.media in prompt order. Throws Error(kInvalidArgument) when a list's
// placeholders and items differ in number.
void ExpandMedia(const std::vector<int32_t>& tokens, std::vector<MediaList> lists,
                 EngineRequest& request);

}  // namespace tandem
