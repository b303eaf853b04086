#include "convert/mmproj_plan.h"

#include <map>

#include "base/error.h"
#include "convert/mmproj_name_map.h"
#include "encoders/clipped_linear.h"
#include "encoders/gemma4v/mmproj_layout.h"
#include "encoders/gemma4v/tensors.h"

namespace tandem {
namespace {

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

// "DIR/model.safetensors: tensor 'HF' (GGUF 'x')".
std::string Culprit(const SafetensorsTensor& t, const std::string& gguf) {
  return t.file + ": tensor '" + t.name + "' (GGUF '" + gguf + "')";
}

PlannedTensor PlanOne(const VisionTensorSpec& spec, const SafetensorsTensor& t,
                      const Gemma4VisionConfig& c, TensorType out_type) {
  using R = VisionTensorRole;
  if (t.dtype != SafetensorsDtype::kF32 && t.dtype != SafetensorsDtype::kF16 &&
      t.dtype != SafetensorsDtype::kBF16) {
    Fail(ErrorKind::kCorrupt,
         Culprit(t, spec.name) + " has dtype " + t.dtype_name + ", expected F32, F16 or BF16");
  }
  PlannedTensor p;
  p.name = spec.name;
  p.ne = spec.ne;
  p.type = MmprojTensorType(spec.role, spec.ne[0], out_type);
  p.inputs = {&t};
  std::vector<uint64_t> want(spec.ne.rbegin(), spec.ne.rend());
  bool ok = t.shape == want;
  if (spec.role == R::kPatchEmbedding) {
    want = {uint64_t(c.n_embd), uint64_t(3) * c.patch_size * c.patch_size};
    ok = t.shape == want;
    p.source = PlannedTensor::Source::kPatchKernel;
  } else if (spec.role == R::kClampBound || spec.role == R::kLayerScale) {
    ok = t.shape.size() <= 1 && t.n_elements() == 1;  // a 0-d buffer or [1]
    p.allow_infinity = spec.role == R::kClampBound;   // HF initialises unused bounds to ±inf
  }
  if (!ok) {
    Fail(ErrorKind::kCorrupt, Culprit(t, spec.name) + " has shape " + ShapeString(t.shape) +
                                  ", expected " + ShapeString(want) + " for this vision_config");
  }
  return p;
}

}  // namespace

MmprojPlan PlanMmprojConversion(const HfVisionConfig& hf, const SafetensorsCheckpoint& checkpoint,
                                TensorType out_type, const std::string& source) {
  if (out_type != TensorType::kF32 && out_type != TensorType::kF16 &&
      out_type != TensorType::kBF16 && out_type != TensorType::kQ8_0) {
    Fail(ErrorKind::kInvalidArgument, "convert writes f32, f16, bf16 or q8_0 weights, not " +
                                          std::string(TensorTypeName(out_type)));
  }
  MmprojPlan plan;
  plan.config = hf.config;
  Gemma4VisionConfig& c = plan.config;

  // 1. Map every vision name.
  std::map<std::string, const SafetensorsTensor*> mapped;
  std::vector<std::string> unmapped, twice;
  for (const SafetensorsTensor* t : checkpoint.tensors()) {
    const HfMmprojName m = MapHfMmprojName(t->name);
    switch (m.role) {
      case HfMmprojRole::kNotMultimodal:
        continue;
      case HfMmprojRole::kAudio:
        ++plan.n_audio;
        continue;
      case HfMmprojRole::kDropped:
        plan.dropped.push_back(t->name);
        continue;
      case HfMmprojRole::kUnmapped:
        unmapped.push_back("'" + t->name + "'");
        continue;
      case HfMmprojRole::kVision:
        break;
    }
    auto [it, inserted] = mapped.emplace(m.gguf_name, t);
    if (!inserted) twice.push_back("'" + it->second->name + "' and '" + t->name + "'");
    if (EndsWith(m.gguf_name, ".out_scale.weight")) c.layer_scale = true;
  }
  if (!unmapped.empty()) {
    Fail(ErrorKind::kUnsupported,
         source + ": " + std::to_string(unmapped.size()) +
             " vision tensors have no mmproj name (not Gemma 4 gemma4v tensors): " +
             ListNames(unmapped));
  }
  if (!twice.empty()) {
    Fail(ErrorKind::kCorrupt,
         source + ": tensors that become the same GGUF tensor: " + ListNames(twice));
  }

  // 2. Every expected tensor, from the one tensor list.
  std::vector<std::string> missing;
  for (const VisionTensorSpec& spec : Gemma4VisionTensorList(c)) {
    auto it = mapped.find(spec.name);
    if (it == mapped.end()) {
      const bool std_tensor =
          spec.role == VisionTensorRole::kStdBias || spec.role == VisionTensorRole::kStdScale;
      if (spec.required || std_tensor) {
        missing.push_back(spec.name + " (HF '" + HfMmprojSourceName(spec.name) + "')");
      }
      continue;
    }
    plan.tensors.push_back(PlanOne(spec, *it->second, c, out_type));
    mapped.erase(it);
  }
  if (!missing.empty()) {
    Fail(ErrorKind::kNotFound,
         source + ": the checkpoint lacks " + std::to_string(missing.size()) +
             " vision tensors this vision_config needs (GGUF names): " + ListNames(missing));
  }

  // 3. Whatever is left does not belong to a tower of this config.
  std::vector<std::string> unexpected;
  for (const auto& [gguf, t] : mapped) {
    std::string why;
    if (IsClampBound(gguf) && !c.clipped_linears) {
      why = ": vision_config.use_clipped_linears is false";
    } else if ((gguf == "v.std_bias" || gguf == "v.std_scale") && !c.standardize) {
      why = ": vision_config.standardize is false";
    }
    unexpected.push_back("'" + t->name + "' (GGUF '" + gguf + "'" + why + ")");
  }
  if (!unexpected.empty()) {
    Fail(ErrorKind::kCorrupt,
         source + ": " + std::to_string(unexpected.size()) +
             " vision tensors do not belong to a tower of this vision_config (num_hidden_layers " +
             std::to_string(c.n_layer) + "): " + ListNames(unexpected));
  }
  return plan;
}

}  // namespace tandem
