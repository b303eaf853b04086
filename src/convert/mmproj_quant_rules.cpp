#include "convert/mmproj_quant_rules.h"

#include <map>

#include "base/error.h"
#include "base/log.h"
#include "encoders/gemma4a/config.h"
#include "encoders/gemma4a/mmproj_layout.h"
#include "encoders/gemma4a/tensors.h"
#include "encoders/gemma4v/config.h"
#include "encoders/gemma4v/mmproj_layout.h"
#include "encoders/gemma4v/tensors.h"
#include "encoders/mmproj_file.h"

namespace tandem {

std::vector<QuantChoice> ChooseMmprojQuantTypes(const MmprojFile& file, QuantPreset preset,
                                                const std::set<std::string, std::less<>>& keep) {
  const std::string& path = file.path();
  TensorType weight_type;
  switch (preset) {
    case QuantPreset::kF16:
      weight_type = TensorType::kF16;
      break;
    case QuantPreset::kBF16:
      weight_type = TensorType::kBF16;
      break;
    case QuantPreset::kQ8_0:
      weight_type = TensorType::kQ8_0;
      break;
    default:
      Fail(ErrorKind::kUnsupported,
           path +
               ": a multimodal projector (general.architecture = clip) is written as F16, "
               "BF16 or Q8_0, the types llama.cpp's converter gives it, not " +
               std::string(GetQuantPresetInfo(preset).name));
  }
  // The converter's type of every tensor of each tower the file has; a matrix whose rows do not
  // fit the blocks falls back (to F16) and is marked so.
  std::map<std::string, QuantChoice, std::less<>> rules;
  if (file.Has(Modality::kVision)) {
    const Gemma4VisionConfig config = Gemma4VisionConfig::FromMmproj(file);
    for (const VisionTensorSpec& spec : Gemma4VisionTensorList(config)) {
      const TensorType type = MmprojTensorType(spec.role, spec.ne[0], weight_type);
      rules[spec.name] = {type, spec.role == VisionTensorRole::kMatrix && type != weight_type};
    }
  }
  if (file.Has(Modality::kAudio)) {
    const Gemma4AudioConfig config = Gemma4AudioConfig::FromMmproj(file);
    for (const AudioTensorSpec& spec : Gemma4AudioTensorList(config)) {
      const TensorType type = AudioMmprojTensorType(spec.role, spec.ne[0], weight_type);
      rules[spec.name] = {type, spec.role == AudioTensorRole::kMatrix && type != weight_type};
    }
  }

  std::vector<QuantChoice> out;
  size_t unknown = 0;
  std::string first_unknown;
  for (const TensorInfo& t : file.gguf().tensors()) {
    auto it = rules.find(t.name);
    if (keep.count(t.name) > 0 || it == rules.end()) {
      if (it == rules.end() && keep.count(t.name) == 0 && unknown++ == 0) first_unknown = t.name;
      out.push_back({t.type, false});
      continue;
    }
    out.push_back(it->second);
  }
  if (unknown > 0) {
    LogWarn(path + ": " + std::to_string(unknown) +
            " tensor(s) that neither gemma4v nor gemma4a uses keep their type, e.g. '" +
            first_unknown + "'");
  }
  return out;
}

}  // namespace tandem
