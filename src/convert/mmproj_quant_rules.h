// `tandem quantize` of a multimodal projector (general.architecture = clip): the types llama.cpp's
// converter gives an mmproj file for an --outtype, not llama-quantize's text-model mix
// (docs/vision.md § Tensors, docs/audio.md § Tensors). gemma4v and gemma4a towers are understood.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "convert/quant_rules.h"

namespace tandem {

class MmprojFile;

// The output type of each tensor of `file` (its tensor order) under `preset`, which must be F16,
// BF16 or Q8_0 (the converter's types): MmprojTensorType for every gemma4v tensor and
// AudioMmprojTensorType for every gemma4a tensor (a matrix whose rows do not fit Q8_0 blocks
// falls back to F16 and is marked so); tensors named in `keep`, and tensors neither tower uses
// (such as v.patch_embd.bias), keep their type. Throws Error(kUnsupported) naming the file for
// another preset or a projector other than gemma4v / gemma4a, plus the configs' FromMmproj
// errors.
std::vector<QuantChoice> ChooseMmprojQuantTypes(const MmprojFile& file, QuantPreset preset,
                                                const std::set<std::string, std::less<>>& keep);

}  // namespace tandem
