#include "model/gemma4/weights.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "gguf/gguf_reader.h"
#include "kernels/tensor_binder.h"
#include "model/gemma4/tensors.h"

namespace tandem {
namespace {

bool IsOtherModality(const std::string& name) {
  for (const char* prefix : {"v.", "a.", "mm.", "mmproj.", "vision", "audio"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// The dense matrices of `w` (Gemma4Weights, const or not) a row is multiplied by: all but the
// router and the experts. Absent ones (data null) among them.
template <class Weights>
auto DenseMatrices(Weights& w) {
  std::vector<decltype(&w.output)> matrices = {&w.output, &w.per_layer_model_proj};
  for (auto& l : w.layers) {
    for (auto* m : {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_output, &l.ffn_gate, &l.ffn_up,
                    &l.ffn_down, &l.ple_gate, &l.ple_proj}) {
      matrices.push_back(m);
    }
  }
  return matrices;
}

}  // namespace

kernels::WeightMatrix Gemma4LayerWeights::ExpertGateUp(int e) const {
  kernels::WeightMatrix w = experts_gate_up;
  w.data = static_cast<const uint8_t*>(w.data) + e * expert_gate_up_bytes;
  return w;
}

kernels::WeightMatrix Gemma4LayerWeights::ExpertDown(int e) const {
  kernels::WeightMatrix w = experts_down;
  w.data = static_cast<const uint8_t*>(w.data) + e * expert_down_bytes;
  return w;
}

size_t Gemma4Weights::PackedBytes() const {
  size_t bytes = 0;
  for (const auto& p : packed) bytes += p->bytes();
  return bytes;
}

std::vector<MatrixUse> Gemma4Weights::MatricesPerRow(const Gemma4Config& config) const {
  std::vector<const kernels::WeightMatrix*> unused;  // K and V of layers that share another's KV
  for (size_t l = 0; l < layers.size() && l < config.layers.size(); ++l) {
    if (!config.layers[l].owns_kv)
      unused.insert(unused.end(), {&layers[l].attn_k, &layers[l].attn_v});
  }
  std::vector<MatrixUse> uses;
  for (const kernels::WeightMatrix* m : DenseMatrices(*this)) {
    if (m->data != nullptr && std::find(unused.begin(), unused.end(), m) == unused.end()) {
      uses.push_back({*m, 1});
    }
  }
  for (const Gemma4LayerWeights& l : layers) {
    if (l.router.data != nullptr) uses.push_back({l.router, 1});
    for (const kernels::WeightMatrix& e : {l.experts_gate_up, l.experts_down}) {
      if (e.data != nullptr) uses.push_back({e, config.n_expert_used});
    }
  }
  return uses;
}

void Gemma4Weights::Pack(const std::vector<kernels::WeightMatrix*>& also) {
  std::vector<kernels::WeightMatrix*> matrices = also;
  for (kernels::WeightMatrix* m : DenseMatrices(*this)) matrices.push_back(m);
  kernels::PackMatrices(matrices, packed);
}

Gemma4Weights Gemma4Weights::Bind(const GgufFile& file, const Gemma4Config& c,
                                  const std::vector<std::string>& also_known) {
  TensorBinder b(file);
  Gemma4Weights w;
  w.layers.resize(c.n_layer);
  size_t ignored_other = 0;
  std::vector<std::string> known = also_known;
  for (const Gemma4TensorSpec& spec : Gemma4TensorList(c)) {
    known.push_back(spec.name);
    const TensorInfo* t = b.Find(spec.name, spec.ne, spec.required);
    if (t == nullptr) continue;
    const std::string& n = spec.name;
    if (spec.layer < 0) {
      if (n == "token_embd.weight") {
        w.token_embd = b.Embedding(*t);
        w.output = b.Matrix(*t);
      } else if (n == "output_norm.weight") {
        w.output_norm = b.Vector(*t);
      } else if (n == "rope_freqs.weight") {
        w.rope_freqs = b.Vector(*t);
      } else if (n == "per_layer_token_embd.weight") {
        w.per_layer_token_embd = b.Embedding(*t);
      } else if (n == "per_layer_model_proj.weight") {
        w.per_layer_model_proj = b.Matrix(*t);
      } else if (n == "per_layer_proj_norm.weight") {
        w.per_layer_proj_norm = b.Vector(*t);
      }
      continue;
    }
    Gemma4LayerWeights& L = w.layers[spec.layer];
    const std::string s = n.substr(n.find('.', 4) + 1);  // strip "blk.N."
    if (s == "attn_norm.weight")
      L.attn_norm = b.Vector(*t);
    else if (s == "attn_q.weight")
      L.attn_q = b.Matrix(*t);
    else if (s == "attn_q_norm.weight")
      L.attn_q_norm = b.Vector(*t);
    else if (s == "attn_k.weight")
      L.attn_k = b.Matrix(*t);
    else if (s == "attn_v.weight")
      L.attn_v = b.Matrix(*t);
    else if (s == "attn_k_norm.weight")
      L.attn_k_norm = b.Vector(*t);
    else if (s == "attn_output.weight")
      L.attn_output = b.Matrix(*t);
    else if (s == "post_attention_norm.weight")
      L.post_attention_norm = b.Vector(*t);
    else if (s == "ffn_norm.weight")
      L.ffn_norm = b.Vector(*t);
    else if (s == "ffn_gate.weight")
      L.ffn_gate = b.Matrix(*t);
    else if (s == "ffn_up.weight")
      L.ffn_up = b.Matrix(*t);
    else if (s == "ffn_down.weight")
      L.ffn_down = b.Matrix(*t);
    else if (s == "post_ffw_norm.weight")
      L.post_ffw_norm = b.Vector(*t);
    else if (s == "layer_output_scale.weight")
      L.output_scale = b.Vector(*t)[0];
    else if (s == "inp_gate.weight")
      L.ple_gate = b.Matrix(*t);
    else if (s == "proj.weight")
      L.ple_proj = b.Matrix(*t);
    else if (s == "post_norm.weight")
      L.ple_post_norm = b.Vector(*t);
    else if (s == "ffn_gate_inp.weight")
      L.router = b.Matrix(*t);
    else if (s == "ffn_gate_inp.scale")
      L.router_scale = b.Vector(*t);
    else if (s == "pre_ffw_norm_2.weight")
      L.pre_ffw_norm_2 = b.Vector(*t);
    else if (s == "post_ffw_norm_1.weight")
      L.post_ffw_norm_1 = b.Vector(*t);
    else if (s == "post_ffw_norm_2.weight")
      L.post_ffw_norm_2 = b.Vector(*t);
    else if (s == "ffn_down_exps.scale")
      L.expert_scale = b.Vector(*t);
    else if (s == "ffn_gate_up_exps.weight" || s == "ffn_down_exps.weight") {
      kernels::WeightMatrix m = b.Matrix(*t);  // expert 0; rows = ne[1]
      const size_t stride = m.row_bytes * static_cast<size_t>(m.rows);
      if (s == "ffn_gate_up_exps.weight") {
        L.experts_gate_up = m;
        L.expert_gate_up_bytes = stride;
      } else {
        L.experts_down = m;
        L.expert_down_bytes = stride;
      }
    }
  }
  if (const TensorInfo* out =
          b.Find("output.weight", {uint64_t(c.n_embd), uint64_t(c.n_vocab)}, false)) {
    w.output = b.Matrix(*out);  // untied head
  }
  for (auto& L : w.layers) {
    if (c.n_expert > 0 && L.expert_scale.empty()) L.expert_scale.assign(c.n_expert, 1.0f);
  }
  // Anything else: other modalities are expected in multimodal files; KV tensors of KV-shared
  // layers are unused by design; the rest is reported.
  std::sort(known.begin(), known.end());
  for (const TensorInfo& t : file.tensors()) {
    if (std::binary_search(known.begin(), known.end(), t.name) || t.name == "output.weight")
      continue;
    if (IsOtherModality(t.name)) {
      ++ignored_other;
    } else if (t.name.find("attn_k") == std::string::npos &&
               t.name.find("attn_v") == std::string::npos) {
      LogWarn(file.path() + ": ignoring unknown tensor '" + t.name + "'");
    }
  }
  if (ignored_other > 0) {
    LogWarn(file.path() + ": ignoring " + std::to_string(ignored_other) +
            " vision/audio tensors (text-only inference)");
  }
  return w;
}

}  // namespace tandem
