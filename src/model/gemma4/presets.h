// Named Gemma 4 configurations: the four released sizes in their real shapes, and tiny variants
// that keep every feature of each (for fixtures and reference tests).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/gemma4/config.h"

namespace tandem {

// Names: e2b, e4b, 26b-a4b, 31b, tiny-e2b, tiny-e4b, tiny-26b-a4b, tiny-31b.
// Throws Error(kInvalidArgument) listing the valid names for anything else.
Gemma4Config Gemma4Preset(std::string_view name);
std::vector<std::string> Gemma4PresetNames();

}  // namespace tandem

namespace tandem {

// An MTP assistant shape for a target preset (docs/mtp.md § Shapes).
struct AssistantPreset {
  Gemma4Config body;    // q_only; 3 sliding + 1 full layer
  int n_embd_out = 0;   // the target's hidden size
  int n_centroids = 0;  // 0: dense head only
  int centroid_top_k = 0;
};

// Names: e2b, e4b, 26b-a4b, 31b and the tiny-* targets; `centroids` adds the E2B/E4B-style
// clustered head (on by default for e2b/e4b-shaped targets).
AssistantPreset Gemma4AssistantPreset(std::string_view target_name, bool centroids);

}  // namespace tandem
