#include "convert/mmproj_quant_rules.h"

#include <map>

#include "base/error.h"
#include "base/log.h"
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
  if (file.Has(Modality::kAudio)) {
    Fail(ErrorKind::kUnsupported,
         path + ": has an audio encoder (" + file.Projector(Modality::kAudio) +
             "); tandem quantize does not know its dtype rules yet (vision-only files only)");
  }
  const Gemma4VisionConfig config = Gemma4VisionConfig::FromMmproj(file);
  std::map<std::string, VisionTensorRole, std::less<>> roles;
  for (const VisionTensorSpec& spec : Gemma4VisionTensorList(config)) roles[spec.name] = spec.role;

  std::vector<QuantChoice> out;
  size_t unknown = 0;
  std::string first_unknown;
  for (const TensorInfo& t : file.gguf().tensors()) {
    auto it = roles.find(t.name);
    if (keep.count(t.name) > 0 || it == roles.end()) {
      if (it == roles.end() && keep.count(t.name) == 0 && unknown++ == 0) first_unknown = t.name;
      out.push_back({t.type, false});
      continue;
    }
    const TensorType type = MmprojTensorType(it->second, t.ne[0], weight_type);
    const bool fallback = it->second == VisionTensorRole::kMatrix && type != weight_type;
    out.push_back({type, fallback});
  }
  if (unknown > 0) {
    LogWarn(path + ": " + std::to_string(unknown) +
            " tensor(s) that gemma4v does not use keep their type, e.g. '" + first_unknown + "'");
  }
  return out;
}

}  // namespace tandem
