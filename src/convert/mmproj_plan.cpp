#include "convert/mmproj_plan.h"

#include <functional>
#include <map>

#include "base/error.h"
#include "convert/mmproj_name_map.h"
#include "encoders/clipped_linear.h"
#include "encoders/gemma4a/mmproj_layout.h"
#include "encoders/gemma4a/tensors.h"
#include "encoders/gemma4v/mmproj_layout.h"
#include "encoders/gemma4v/tensors.h"

namespace tandem {
namespace {

using NameMap = std::map<std::string, const SafetensorsTensor*>;

// One GGUF tensor of a tower as the checkpoint must hold it.
struct Expected {
  std::string name;
  std::vector<uint64_t> ne;        // GGUF shape
  TensorType type;                 // GGUF type (the converter's rules)
  bool required;                   // an error when the checkpoint lacks it
  std::vector<uint64_t> hf_shape;  // the checkpoint's shape; empty: one value, 0-d or [1]
  PlannedTensor::Source source = PlannedTensor::Source::kRows;
  bool allow_infinity = false;  // clamp bounds: HF initialises unused ones to ±inf
};

// What one tower's check needs besides its expected tensors.
struct TowerCheck {
  const char* what;    // "vision", "audio"
  const char* config;  // "vision_config", "audio_config"
  int n_layer;
  bool clipped;
  // Why a mapped tensor the expected list does not hold is not part of this config ("" if
  // nothing more specific than the layer count can be said).
  std::function<std::string(const std::string& gguf)> explain;
};

std::string ShapeString(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string ListNames(const std::vector<std::string>& names, size_t max_listed = 12) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max_listed; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max_listed)
    s += " (and " + std::to_string(names.size() - max_listed) + " more)";
  return s;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsClampBound(std::string_view gguf) {
  for (const char* suffix : kClampSuffixes) {
    if (EndsWith(gguf, suffix)) return true;
  }
  return false;
}

std::vector<uint64_t> Reversed(const std::vector<uint64_t>& ne) {
  return {ne.rbegin(), ne.rend()};
}

std::vector<Expected> VisionExpectations(const Gemma4VisionConfig& c, TensorType out_type) {
  using R = VisionTensorRole;
  std::vector<Expected> out;
  for (const VisionTensorSpec& spec : Gemma4VisionTensorList(c)) {
    Expected e{spec.name, spec.ne, MmprojTensorType(spec.role, spec.ne[0], out_type),
               spec.required || spec.role == R::kStdBias || spec.role == R::kStdScale,
               Reversed(spec.ne)};
    if (spec.role == R::kPatchEmbedding) {
      // transformers' patch linear [D, 3·p·p], written as the conv kernel.
      e.hf_shape = {uint64_t(c.n_embd), uint64_t(3) * c.patch_size * c.patch_size};
      e.source = PlannedTensor::Source::kPatchKernel;
    } else if (spec.role == R::kClampBound || spec.role == R::kLayerScale) {
      e.hf_shape.clear();
      e.allow_infinity = spec.role == R::kClampBound;
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<Expected> AudioExpectations(const Gemma4AudioConfig& c, TensorType out_type) {
  using R = AudioTensorRole;
  std::vector<Expected> out;
  for (const AudioTensorSpec& spec : Gemma4AudioTensorList(c)) {
    Expected e{spec.name, spec.ne, AudioMmprojTensorType(spec.role, spec.ne[0], out_type),
               spec.role != R::kClampBound, Reversed(spec.ne)};
    switch (spec.role) {
      case R::kDepthwiseConv:  // torch's Conv1d weight [Da, 1, K], squeezed to {K, Da}
        e.hf_shape = {spec.ne[1], 1, spec.ne[0]};
        break;
      case R::kPerDimScale:
        e.source = PlannedTensor::Source::kSoftplus;
        break;
      case R::kClampBound:
        e.hf_shape.clear();
        e.allow_infinity = true;
        break;
      default:
        break;
    }
    out.push_back(std::move(e));
  }
  return out;
}

// "DIR/model.safetensors: tensor 'HF' (GGUF 'x')".
std::string Culprit(const SafetensorsTensor& t, const std::string& gguf) {
  return t.file + ": tensor '" + t.name + "' (GGUF '" + gguf + "')";
}

PlannedTensor PlanOne(const Expected& e, const SafetensorsTensor& t, const char* config) {
  if (t.dtype != SafetensorsDtype::kF32 && t.dtype != SafetensorsDtype::kF16 &&
      t.dtype != SafetensorsDtype::kBF16) {
    Fail(ErrorKind::kCorrupt,
         Culprit(t, e.name) + " has dtype " + t.dtype_name + ", expected F32, F16 or BF16");
  }
  const bool ok = e.hf_shape.empty() ? t.shape.size() <= 1 && t.n_elements() == 1  // 0-d or [1]
                                     : t.shape == e.hf_shape;
  if (!ok) {
    Fail(ErrorKind::kCorrupt,
         Culprit(t, e.name) + " has shape " + ShapeString(t.shape) + ", expected " +
             (e.hf_shape.empty() ? "one value" : ShapeString(e.hf_shape)) + " for this " + config);
  }
  PlannedTensor p;
  p.name = e.name;
  p.ne = e.ne;
  p.type = e.type;
  p.source = e.source;
  p.inputs = {&t};
  p.allow_infinity = e.allow_infinity;
  return p;
}

// Plans every expected tensor of one tower from `mapped` (its GGUF name → checkpoint tensor),
// then refuses whatever is left over.
std::vector<PlannedTensor> PlanTower(const std::vector<Expected>& expected, NameMap mapped,
                                     const TowerCheck& tower, const std::string& source) {
  std::vector<PlannedTensor> out;
  std::vector<std::string> missing;
  for (const Expected& e : expected) {
    auto it = mapped.find(e.name);
    if (it == mapped.end()) {
      if (e.required) missing.push_back(e.name + " (HF '" + HfMmprojSourceName(e.name) + "')");
      continue;
    }
    out.push_back(PlanOne(e, *it->second, tower.config));
    mapped.erase(it);
  }
  if (!missing.empty()) {
    Fail(ErrorKind::kNotFound, source + ": the checkpoint lacks " + std::to_string(missing.size()) +
                                   " " + tower.what + " tensors this " + tower.config +
                                   " needs (GGUF names): " + ListNames(missing));
  }
  std::vector<std::string> unexpected;
  for (const auto& [gguf, t] : mapped) {
    std::string why;
    if (IsClampBound(gguf) && !tower.clipped) {
      why = std::string(": ") + tower.config + ".use_clipped_linears is false";
    } else if (tower.explain) {
      why = tower.explain(gguf);
    }
    unexpected.push_back("'" + t->name + "' (GGUF '" + gguf + "'" + why + ")");
  }
  if (!unexpected.empty()) {
    Fail(ErrorKind::kCorrupt, source + ": " + std::to_string(unexpected.size()) + " " + tower.what +
                                  " tensors do not belong to a tower of this " + tower.config +
                                  " (num_hidden_layers " + std::to_string(tower.n_layer) +
                                  "): " + ListNames(unexpected));
  }
  return out;
}

}  // namespace

MmprojPlan PlanMmprojConversion(const HfVisionConfig& vision,
                                const std::optional<Gemma4AudioConfig>& audio,
                                const SafetensorsCheckpoint& checkpoint, TensorType out_type,
                                const std::string& source) {
  if (out_type != TensorType::kF32 && out_type != TensorType::kF16 &&
      out_type != TensorType::kBF16 && out_type != TensorType::kQ8_0) {
    Fail(ErrorKind::kInvalidArgument, "convert writes f32, f16, bf16 or q8_0 weights, not " +
                                          std::string(TensorTypeName(out_type)));
  }
  MmprojPlan plan;
  plan.vision = vision.config;
  plan.audio = audio;
  Gemma4VisionConfig& vc = plan.vision;

  // 1. Map every multimodal name to its tower.
  NameMap vision_mapped, audio_mapped;
  std::vector<std::string> unmapped, twice;
  for (const SafetensorsTensor* t : checkpoint.tensors()) {
    const HfMmprojName m = MapHfMmprojName(t->name);
    NameMap* mapped = nullptr;
    switch (m.role) {
      case HfMmprojRole::kNotMultimodal:
        continue;
      case HfMmprojRole::kDropped:
        plan.dropped.push_back(t->name);
        continue;
      case HfMmprojRole::kUnmapped:
        unmapped.push_back("'" + t->name + "'");
        continue;
      case HfMmprojRole::kVision:
        mapped = &vision_mapped;
        if (EndsWith(m.gguf_name, ".out_scale.weight")) vc.layer_scale = true;
        break;
      case HfMmprojRole::kAudio:
        mapped = &audio_mapped;
        break;
    }
    auto [it, inserted] = mapped->emplace(m.gguf_name, t);
    if (!inserted) twice.push_back("'" + it->second->name + "' and '" + t->name + "'");
  }
  if (!unmapped.empty()) {
    Fail(ErrorKind::kUnsupported,
         source + ": " + std::to_string(unmapped.size()) +
             " multimodal tensors have no mmproj name (not Gemma 4 gemma4v or gemma4a tensors): " +
             ListNames(unmapped));
  }
  if (!twice.empty()) {
    Fail(ErrorKind::kCorrupt,
         source + ": tensors that become the same GGUF tensor: " + ListNames(twice));
  }
  if (!audio && !audio_mapped.empty()) {
    Fail(ErrorKind::kCorrupt,
         source + ": the checkpoint has " + std::to_string(audio_mapped.size()) +
             " audio tower tensors (e.g. '" + audio_mapped.begin()->second->name +
             "') but config.json has no audio_config");
  }

  // 2. Every expected tensor of each tower, from the one tensor list, and nothing else.
  const TowerCheck vision_check{
      "vision", "vision_config", vc.n_layer, vc.clipped_linears,
      [&vc](const std::string& gguf) -> std::string {
        if ((gguf == "v.std_bias" || gguf == "v.std_scale") && !vc.standardize) {
          return ": vision_config.standardize is false";
        }
        return "";
      }};
  plan.tensors =
      PlanTower(VisionExpectations(vc, out_type), std::move(vision_mapped), vision_check, source);
  if (audio) {
    const TowerCheck audio_check{"audio", "audio_config", audio->n_layer, audio->clipped_linears,
                                 nullptr};
    std::vector<PlannedTensor> a = PlanTower(AudioExpectations(*audio, out_type),
                                             std::move(audio_mapped), audio_check, source);
    plan.n_audio_tensors = a.size();
    for (PlannedTensor& p : a) plan.tensors.push_back(std::move(p));
  }
  return plan;
}

}  // namespace tandem
