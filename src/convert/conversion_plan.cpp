#include "convert/conversion_plan.h"

#include <algorithm>
#include <map>

#include "base/error.h"
#include "base/log.h"
#include "convert/name_map.h"

namespace tandem {
namespace {

struct MappedInput {
  const SafetensorsTensor* tensor;
  HfTensorPart part;
};

struct Mapped {
  int layer = -1;
  std::vector<MappedInput> inputs;
};

std::string ShapeString(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// GGUF ne → the PyTorch shape a checkpoint stores it in.
std::vector<uint64_t> HfShape(const std::vector<uint64_t>& ne) {
  return {ne.rbegin(), ne.rend()};
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "a, b, c (and N more)" for messages.
std::string ListNames(const std::vector<std::string>& names, size_t max_listed = 12) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max_listed; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max_listed)
    s += " (and " + std::to_string(names.size() - max_listed) + " more)";
  return s;
}

bool IsFloat(SafetensorsDtype d) {
  return d == SafetensorsDtype::kF32 || d == SafetensorsDtype::kF16 || d == SafetensorsDtype::kBF16;
}

std::string Culprit(const SafetensorsTensor& t, const std::string& gguf) {
  return "tensor '" + t.name + "' (GGUF '" + gguf + "')";
}

void CheckFloat(const SafetensorsTensor& t, const std::string& gguf, const std::string& source) {
  if (!IsFloat(t.dtype)) {
    Fail(ErrorKind::kCorrupt, source + ": " + Culprit(t, gguf) + " has dtype " + t.dtype_name +
                                  ", expected F32, F16 or BF16");
  }
}

// The checkpoint tensor must have the list's shape; a single value may be stored as a scalar
// and embedding tables may carry extra rows past the tokenizer's vocabulary.
void CheckShape(const SafetensorsTensor& t, const Gemma4TensorSpec& spec,
                const std::string& source) {
  const std::vector<uint64_t> want = HfShape(spec.ne);
  if (t.shape == want) return;
  if (spec.ne == std::vector<uint64_t>{1} && t.n_elements() == 1) return;
  const bool table = spec.name == "token_embd.weight" || spec.name == "per_layer_token_embd.weight";
  if (table && t.shape.size() == 2 && t.shape[1] == want[1] && t.shape[0] >= want[0]) return;
  Fail(ErrorKind::kCorrupt, source + ": " + Culprit(t, spec.name) + " has shape " +
                                ShapeString(t.shape) + ", expected " + ShapeString(want) +
                                " for this config");
}

// The assistant's extra tensors, and the untied output head (docs/mtp.md § Tensors).
void AddExtraSpecs(const HfModelConfig& hf, std::vector<Gemma4TensorSpec>& specs) {
  const Gemma4Config& c = hf.config;
  const uint64_t d = c.n_embd, v = c.n_vocab;
  if (!hf.tie_word_embeddings)
    specs.push_back({"output.weight", {d, v}, TensorRole::kMatrix, true, -1});
  if (hf.kind != HfModelKind::kAssistant) return;
  const uint64_t b = hf.backbone_hidden_size;
  specs.push_back({"nextn.pre_projection.weight", {2 * b, d}, TensorRole::kMatrix, true, -1});
  specs.push_back({"nextn.post_projection.weight", {d, b}, TensorRole::kMatrix, true, -1});
  if (hf.use_ordered_embeddings) {
    const uint64_t n_c = hf.num_centroids;
    specs.push_back({"masked_embd_centroids.weight", {d, n_c}, TensorRole::kMatrix, true, -1});
    specs.push_back({"masked_embd_ordering", {v}, TensorRole::kScale, true, -1});
  }
}

// Tensors a checkpoint may carry that the GGUF leaves out: K/V of layers that read another
// layer's cache (HF ignores them on load), and an unused centroid head.
bool Droppable(const std::string& gguf, int layer, const HfModelConfig& hf) {
  if (gguf.rfind("masked_embd_", 0) == 0) return !hf.use_ordered_embeddings;
  if (layer < 0 || layer >= hf.config.n_layer || hf.config.layers[layer].owns_kv) return false;
  return EndsWith(gguf, ".attn_k.weight") || EndsWith(gguf, ".attn_v.weight") ||
         EndsWith(gguf, ".attn_k_norm.weight");
}

PlannedTensor PlanOne(const Gemma4TensorSpec& spec, const std::vector<MappedInput>& inputs,
                      TensorType out_type, const std::string& source) {
  PlannedTensor p;
  p.name = spec.name;
  p.ne = spec.ne;
  p.type = ConvertedTensorType(spec.name, spec.ne, spec.role, out_type);
  const SafetensorsTensor& first = *inputs[0].tensor;
  if (spec.name == "masked_embd_ordering") {
    if (inputs.size() != 1 ||
        (first.dtype != SafetensorsDtype::kI64 && first.dtype != SafetensorsDtype::kI32)) {
      Fail(ErrorKind::kCorrupt, source + ": " + Culprit(first, spec.name) + " has dtype " +
                                    first.dtype_name + ", expected I64 or I32");
    }
    if (first.n_elements() != spec.ne[0] || first.shape.size() != 1) {
      Fail(ErrorKind::kCorrupt, source + ": " + Culprit(first, spec.name) + " has shape " +
                                    ShapeString(first.shape) + ", expected [" +
                                    std::to_string(spec.ne[0]) + "] (one entry per token)");
    }
    p.type = TensorType::kI32;
    p.source = PlannedTensor::Source::kTokenOrdering;
    p.inputs = {&first};
    return p;
  }
  if (inputs.size() == 1 && inputs[0].part == HfTensorPart::kWhole) {
    CheckFloat(first, spec.name, source);
    CheckShape(first, spec, source);
    p.inputs = {&first};
    return p;
  }
  // Separate expert gate and up projections [E, F, D] become the halves of {D, 2F, E}.
  const MappedInput* gate = nullptr;
  const MappedInput* up = nullptr;
  for (const MappedInput& in : inputs) {
    if (in.part == HfTensorPart::kExpertGate) gate = &in;
    if (in.part == HfTensorPart::kExpertUp) up = &in;
  }
  if (inputs.size() != 2 || gate == nullptr || up == nullptr) {
    std::vector<std::string> names;
    for (const MappedInput& in : inputs) names.push_back("'" + in.tensor->name + "'");
    Fail(ErrorKind::kCorrupt,
         source + ": GGUF tensor '" + spec.name +
             "' would come from several checkpoint tensors: " + ListNames(names));
  }
  const std::vector<uint64_t> half = {spec.ne[2], spec.ne[1] / 2, spec.ne[0]};
  for (const MappedInput* in : {gate, up}) {
    CheckFloat(*in->tensor, spec.name, source);
    if (spec.ne.size() != 3 || spec.ne[1] % 2 != 0 || in->tensor->shape != half) {
      Fail(ErrorKind::kCorrupt, source + ": " + Culprit(*in->tensor, spec.name) + " has shape " +
                                    ShapeString(in->tensor->shape) + ", expected " +
                                    ShapeString(half) + " for this config");
    }
  }
  p.source = PlannedTensor::Source::kExpertHalves;
  p.inputs = {gate->tensor, up->tensor};
  return p;
}

}  // namespace

TensorType ConvertedTensorType(const std::string& name, const std::vector<uint64_t>& ne,
                               TensorRole role, TensorType out_type) {
  if (role == TensorRole::kNorm || role == TensorRole::kScale || role == TensorRole::kRopeFreqs ||
      ne.size() <= 1 || EndsWith(name, "_norm.weight") ||
      name.find("ffn_gate_inp.weight") != std::string::npos || out_type == TensorType::kF32) {
    return TensorType::kF32;
  }
  if (ne[0] % GetTensorTypeTraits(out_type).block_size != 0) return TensorType::kF16;
  return out_type;
}

ConversionPlan PlanConversion(const HfModelConfig& hf, int n_vocab,
                              const SafetensorsCheckpoint& checkpoint, TensorType out_type,
                              const std::string& source) {
  if (out_type != TensorType::kF32 && out_type != TensorType::kF16 &&
      out_type != TensorType::kBF16 && out_type != TensorType::kQ8_0) {
    Fail(ErrorKind::kInvalidArgument, "convert writes f32, f16, bf16 or q8_0 weights, not " +
                                          std::string(TensorTypeName(out_type)));
  }
  ConversionPlan plan;
  plan.hf = hf;
  Gemma4Config& c = plan.hf.config;

  // 1. Map every checkpoint name.
  std::map<std::string, Mapped> mapped;
  std::vector<std::string> unmapped;
  for (const SafetensorsTensor* t : checkpoint.tensors()) {
    HfTensorName m = MapHfTensorName(t->name, hf.kind);
    switch (m.role) {
      case HfTensorRole::kMultimodal:
        ++plan.n_multimodal;
        continue;
      case HfTensorRole::kTiedHead:
        if (hf.tie_word_embeddings) {
          plan.dropped.push_back(t->name);
          continue;
        }
        m.gguf_name = "output.weight";
        break;
      case HfTensorRole::kUnmapped:
        unmapped.push_back("'" + t->name + "'");
        continue;
      case HfTensorRole::kTensor:
        break;
    }
    if (m.layer >= c.n_layer) {
      Fail(ErrorKind::kCorrupt, source + ": tensor '" + t->name + "' belongs to layer " +
                                    std::to_string(m.layer) + " but num_hidden_layers is " +
                                    std::to_string(c.n_layer));
    }
    Mapped& entry = mapped[m.gguf_name];
    entry.layer = m.layer;
    entry.inputs.push_back({t, m.part});
  }
  if (!unmapped.empty()) {
    Fail(ErrorKind::kUnsupported,
         source + ": " + std::to_string(unmapped.size()) +
             " tensors have no GGUF name (not Gemma 4 text tensors): " + ListNames(unmapped));
  }

  // 2. Resolve the config against the checkpoint and the tokenizer.
  if (!plan.hf.ple_width_given) {
    c.n_embd_per_layer = 0;
    auto it = mapped.find("per_layer_token_embd.weight");
    if (it != mapped.end() && it->second.inputs[0].tensor->shape.size() == 2) {
      const uint64_t width = it->second.inputs[0].tensor->shape[1];
      if (width % c.n_layer != 0) {
        Fail(ErrorKind::kCorrupt, source + ": tensor '" + it->second.inputs[0].tensor->name +
                                      "' is " + std::to_string(width) +
                                      " wide, not a multiple of the layer count");
      }
      c.n_embd_per_layer = static_cast<int>(width / c.n_layer);
    }
  }
  if (n_vocab <= 0 || n_vocab > c.n_vocab) {
    Fail(ErrorKind::kCorrupt, source + ": the tokenizer has " + std::to_string(n_vocab) +
                                  " tokens, more than config.json's vocab_size " +
                                  std::to_string(c.n_vocab));
  }
  if (c.n_embd_per_layer > 0 && plan.hf.vocab_size_per_layer_input < n_vocab) {
    Fail(ErrorKind::kCorrupt, source + ": vocab_size_per_layer_input " +
                                  std::to_string(plan.hf.vocab_size_per_layer_input) +
                                  " is smaller than the tokenizer's " + std::to_string(n_vocab) +
                                  " tokens");
  }
  if (n_vocab < c.n_vocab) {
    LogInfo(source + ": embedding tables trimmed from " + std::to_string(c.n_vocab) + " to the " +
            std::to_string(n_vocab) + " tokens of the tokenizer");
  }
  if (plan.hf.use_ordered_embeddings && n_vocab % plan.hf.num_centroids != 0) {
    Fail(ErrorKind::kCorrupt, source + ": num_centroids " + std::to_string(plan.hf.num_centroids) +
                                  " does not divide the " + std::to_string(n_vocab) + " tokens");
  }
  c.n_vocab = n_vocab;
  c.Derive(source);

  // 3. Every expected tensor, from the one tensor list.
  std::vector<Gemma4TensorSpec> specs = Gemma4TensorList(c);
  AddExtraSpecs(plan.hf, specs);
  std::vector<std::string> missing;
  for (const Gemma4TensorSpec& spec : specs) {
    if (spec.role == TensorRole::kRopeFreqs) {
      plan.tensors.push_back(
          {spec.name, spec.ne, TensorType::kF32, PlannedTensor::Source::kRopeFreqs, {}});
      continue;
    }
    auto it = mapped.find(spec.name);
    if (it == mapped.end()) {
      if (spec.required) missing.push_back(spec.name);
      continue;
    }
    plan.tensors.push_back(PlanOne(spec, it->second.inputs, out_type, source));
    mapped.erase(it);
  }
  if (!missing.empty()) {
    Fail(ErrorKind::kNotFound,
         source + ": the checkpoint lacks " + std::to_string(missing.size()) +
             " tensors this config needs (GGUF names): " + ListNames(missing));
  }

  // 4. Whatever is left must be something the GGUF may leave out.
  std::vector<std::string> unexpected;
  for (const auto& [gguf, entry] : mapped) {
    for (const MappedInput& in : entry.inputs) {
      if (Droppable(gguf, entry.layer, plan.hf)) {
        plan.dropped.push_back(in.tensor->name);
      } else {
        unexpected.push_back("'" + in.tensor->name + "' (GGUF '" + gguf + "')");
      }
    }
  }
  if (!unexpected.empty()) {
    Fail(ErrorKind::kCorrupt,
         source + ": " + std::to_string(unexpected.size()) +
             " tensors do not belong to a model of this config: " + ListNames(unexpected));
  }
  return plan;
}

}  // namespace tandem
