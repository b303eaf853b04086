// Named gemma4a tower shapes: the released checkpoints' (docs/audio.md § Sizes) and a tiny one
// for tests. Only the E-series checkpoints (E2B, E4B) have an audio tower.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "encoders/gemma4a/config.h"

namespace tandem {

// Names: e2b, e4b (Da 1024, 12 layers, 8 heads of 128, FFN 4096, 128 mel bins, subsampling
// channels 128 and 32, output 1536, clipped linears; Dt 1536 / 2560), tiny (Da 32, 2 layers,
// 2 heads of 16, FFN 128, 128 mel bins, channels 128 and 4, output 48, clipped linears, Dt 128 =
// the tiny text presets' width), and tiny-e2b, tiny-e4b (the tiny tower, named after the text
// preset it goes with). Throws Error(kInvalidArgument) listing the names; for 26b-a4b, 31b and
// their tiny-* names it says that the checkpoint has no audio tower.
Gemma4AudioConfig Gemma4AudioPreset(std::string_view name);
std::vector<std::string> Gemma4AudioPresetNames();
// Whether `name` is one of Gemma4AudioPresetNames().
bool HasGemma4AudioPreset(std::string_view name);

}  // namespace tandem
