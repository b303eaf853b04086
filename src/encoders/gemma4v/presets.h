// Named gemma4v tower shapes: the released checkpoints' (docs/vision.md § Sizes) and a tiny one
// that keeps every feature (clipped linears and standardization together) for tests.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "encoders/gemma4v/config.h"

namespace tandem {

// Names: e2b, e4b (Dv 768, 16 layers, 12 heads, FFN 3072, clipped linears; Dt 1536 / 2560),
// 26b-a4b, 31b (Dv 1152, 27 layers, 16 heads of 72, FFN 4304, standardization; Dt 2816 / 5376),
// tiny (Dv 32, 2 layers, 2 heads of 16, FFN 64, 64 positions, both features, Dt 128 = the tiny
// text presets' width), and tiny-e2b, tiny-e4b, tiny-26b-a4b, tiny-31b (the tiny tower, named
// after the text preset it goes with). Throws Error(kInvalidArgument) listing the names.
Gemma4VisionConfig Gemma4VisionPreset(std::string_view name);
std::vector<std::string> Gemma4VisionPresetNames();

}  // namespace tandem
