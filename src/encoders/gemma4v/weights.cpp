#include "encoders/gemma4v/weights.h"

#include <cstring>
#include <set>
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "base/mapped_file.h"
#include "encoders/gemma4v/tensors.h"
#include "gguf/gguf_reader.h"
#include "kernels/tensor_binder.h"

namespace tandem {
namespace {

kernels::WeightMatrix CheckedMatrix(const GgufFile& file, const TensorInfo& t, int64_t rows,
                                    int64_t cols) {
  if (!kernels::MatMulSupportsType(t.type)) {
    Fail(ErrorKind::kUnsupported, file.path() + ": tensor '" + t.name + "' has type " +
                                      std::string(TensorTypeName(t.type)) +
                                      ", which tandem cannot multiply");
  }
  const uint32_t block = GetTensorTypeTraits(t.type).block_size;
  if (cols % block != 0) {
    Fail(ErrorKind::kInvalidArgument,
         file.path() + ": tensor '" + t.name + "' has rows of " + std::to_string(cols) +
             " values, not a multiple of its type's block of " + std::to_string(block));
  }
  return kernels::DenseWeightMatrix(t.type, file.TensorData(t), rows, cols);
}

float OneF32(const GgufFile& file, const TensorInfo& t) {
  if (t.type != TensorType::kF32) {
    Fail(ErrorKind::kInvalidArgument, file.path() + ": tensor '" + t.name + "' has type " +
                                          std::string(TensorTypeName(t.type)) +
                                          ", expected f32 (one f32 value)");
  }
  float v;
  std::memcpy(&v, file.TensorData(t), sizeof(v));
  return v;
}

// Names a gemma4v file may hold that tandem binds or knowingly skips.
std::set<std::string> KnownNames(const Gemma4VisionConfig& config) {
  Gemma4VisionConfig all = config;
  all.clipped_linears = all.standardize = all.layer_scale = true;
  std::set<std::string> names;
  for (const VisionTensorSpec& spec : Gemma4VisionTensorList(all)) names.insert(spec.name);
  names.insert("v.patch_embd.bias");  // unused by the Gemma 4 graph in llama.cpp too
  return names;
}

}  // namespace

Gemma4VisionWeights Gemma4VisionWeights::Bind(const GgufFile& file, const Gemma4VisionConfig& c) {
  TensorBinder b(file);
  Gemma4VisionWeights w;
  w.layers.resize(c.n_layer);
  for (const VisionTensorSpec& spec : Gemma4VisionTensorList(c)) {
    const TensorInfo* t = b.Find(spec.name, spec.ne, spec.required);
    if (t == nullptr) continue;
    Gemma4VisionLayerWeights* layer = spec.layer >= 0 ? &w.layers[spec.layer] : nullptr;
    const std::string& n = spec.name;
    switch (spec.role) {
      case VisionTensorRole::kPatchEmbedding:
        w.patch_embd = CheckedMatrix(file, *t, static_cast<int64_t>(t->ne[3]),
                                     static_cast<int64_t>(t->ne[0] * t->ne[1] * t->ne[2]));
        break;
      case VisionTensorRole::kPositionTable:
        w.position_embd = b.Embedding(*t);
        w.position_embd.n_rows = static_cast<int64_t>(t->ne[1] * t->ne[2]);
        break;
      case VisionTensorRole::kMatrix: {
        kernels::WeightMatrix m =
            CheckedMatrix(file, *t, static_cast<int64_t>(t->ne[1]), static_cast<int64_t>(t->ne[0]));
        if (layer == nullptr) {
          w.input_projection = m;
          break;
        }
        ClippedLinear* linears[7] = {&layer->attn_q,   &layer->attn_k,   &layer->attn_v,
                                     &layer->attn_out, &layer->ffn_gate, &layer->ffn_up,
                                     &layer->ffn_down};
        for (int i = 0; i < 7; ++i) {
          const std::string base = VisionLayerTensorName(spec.layer, kVisionLinears[i]);
          if (n != base + ".weight") continue;
          linears[i]->w = m;
          BindClampBounds(b, base, *linears[i]);  // each bound optional
        }
        break;
      }
      case VisionTensorRole::kNorm:
      case VisionTensorRole::kHeadNorm: {
        std::vector<float> v = b.Vector(*t);
        const std::string suffix = n.substr(n.find('.', 6) + 1);  // after "v.blk.N."
        if (suffix == "ln1.weight") {
          layer->ln1 = std::move(v);
        } else if (suffix == "attn_q_norm.weight") {
          layer->attn_q_norm = std::move(v);
        } else if (suffix == "attn_k_norm.weight") {
          layer->attn_k_norm = std::move(v);
        } else if (suffix == "attn_post_norm.weight") {
          layer->attn_post_norm = std::move(v);
        } else if (suffix == "ln2.weight") {
          layer->ln2 = std::move(v);
        } else if (suffix == "ffn_post_norm.weight") {
          layer->ffn_post_norm = std::move(v);
        } else {
          Fail(ErrorKind::kInternal, "gemma4v: unhandled norm " + n);
        }
        break;
      }
      case VisionTensorRole::kClampBound:
        break;  // read with their linear
      case VisionTensorRole::kLayerScale:
        layer->out_scale = OneF32(file, *t);
        layer->has_out_scale = true;
        break;
      case VisionTensorRole::kStdBias:
        w.std_bias = b.Vector(*t);
        break;
      case VisionTensorRole::kStdScale:
        w.std_scale = b.Vector(*t);
        break;
    }
  }

  const std::set<std::string> known = KnownNames(c);
  size_t unknown = 0;
  std::string first;
  for (const TensorInfo& t : file.tensors()) {
    const bool vision = t.name.rfind("v.", 0) == 0 ||
                        (t.name.rfind("mm.", 0) == 0 && t.name.rfind("mm.a.", 0) != 0);
    if (vision && known.count(t.name) == 0) {
      if (unknown++ == 0) first = t.name;
    }
  }
  if (unknown > 0) {
    LogWarn(file.path() + ": ignoring " + std::to_string(unknown) +
            " vision tensor(s) gemma4v does not use, e.g. '" + first + "'");
  }
  return w;
}

void Gemma4VisionWeights::PackPanels() {
  for (Gemma4VisionLayerWeights& l : layers) {
    for (ClippedLinear* m :
         {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_out, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
      if (m->panels || !kernels::CanPackPanels(m->w.type)) continue;
      m->panels = std::make_shared<const kernels::PanelMatrix>(kernels::PackPanels(m->w));
      ReleaseMappedPages(m->w.data, static_cast<size_t>(m->w.rows) * m->w.row_bytes);
    }
  }
}

void Gemma4VisionWeights::Pack() {
  std::vector<kernels::WeightMatrix*> matrices = {&patch_embd, &input_projection};
  for (Gemma4VisionLayerWeights& l : layers) {
    for (ClippedLinear* m :
         {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_out, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
      matrices.push_back(&m->w);
    }
  }
  kernels::PackMatrices(matrices, packed);
}

}  // namespace tandem
