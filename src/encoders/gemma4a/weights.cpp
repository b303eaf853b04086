#include "encoders/gemma4a/weights.h"

#include <set>
#include <string>
#include <string_view>

#include "base/error.h"
#include "base/log.h"
#include "base/mapped_file.h"
#include "encoders/gemma4a/tensors.h"
#include "gguf/gguf_reader.h"
#include "kernels/tensor_binder.h"

namespace tandem {
namespace {

kernels::WeightMatrix CheckedMatrix(const TensorBinder& b, const TensorInfo& t) {
  kernels::WeightMatrix m = b.Matrix(t);  // throws naming the tensor on a type MatMul cannot read
  const uint32_t block = GetTensorTypeTraits(t.type).block_size;
  if (m.cols % block != 0) {
    Fail(ErrorKind::kInvalidArgument,
         b.file().path() + ": tensor '" + t.name + "' has rows of " + std::to_string(m.cols) +
             " values, not a multiple of its type's block of " + std::to_string(block));
  }
  return m;
}

// The layer's linear called `base` ("attn_q", ...), or null.
ClippedLinear* LinearOf(Gemma4AudioLayerWeights& l, std::string_view base) {
  struct Entry {
    const char* name;
    ClippedLinear Gemma4AudioLayerWeights::*member;
  };
  static constexpr Entry kLinears[] = {
      {"ffn_up", &Gemma4AudioLayerWeights::ffn_up},
      {"ffn_down", &Gemma4AudioLayerWeights::ffn_down},
      {"attn_q", &Gemma4AudioLayerWeights::attn_q},
      {"attn_k", &Gemma4AudioLayerWeights::attn_k},
      {"attn_v", &Gemma4AudioLayerWeights::attn_v},
      {"attn_out", &Gemma4AudioLayerWeights::attn_out},
      {"conv_pw1", &Gemma4AudioLayerWeights::conv_pw1},
      {"conv_pw2", &Gemma4AudioLayerWeights::conv_pw2},
      {"ffn_up_1", &Gemma4AudioLayerWeights::ffn_up_1},
      {"ffn_down_1", &Gemma4AudioLayerWeights::ffn_down_1},
  };
  for (const Entry& e : kLinears) {
    if (base == e.name) return &(l.*e.member);
  }
  return nullptr;
}

// The layer's norm gain called `base` ("ffn_norm", ...), or null.
std::vector<float>* NormOf(Gemma4AudioLayerWeights& l, std::string_view base) {
  struct Entry {
    const char* name;
    std::vector<float> Gemma4AudioLayerWeights::*member;
  };
  static constexpr Entry kNorms[] = {
      {"ffn_norm", &Gemma4AudioLayerWeights::ffn_norm},
      {"ffn_post_norm", &Gemma4AudioLayerWeights::ffn_post_norm},
      {"attn_pre_norm", &Gemma4AudioLayerWeights::attn_pre_norm},
      {"attn_post_norm", &Gemma4AudioLayerWeights::attn_post_norm},
      {"conv_norm", &Gemma4AudioLayerWeights::conv_norm},
      {"norm_conv", &Gemma4AudioLayerWeights::norm_conv},
      {"ffn_norm_1", &Gemma4AudioLayerWeights::ffn_norm_1},
      {"ffn_post_norm_1", &Gemma4AudioLayerWeights::ffn_post_norm_1},
      {"ln2", &Gemma4AudioLayerWeights::ln2},
  };
  for (const Entry& e : kNorms) {
    if (base == e.name) return &(l.*e.member);
  }
  return nullptr;
}

// "a.blk.N.<base>.weight" -> "<base>".
std::string_view LayerBase(std::string_view name) {
  name.remove_prefix(name.find('.', 6) + 1);  // after "a.blk.N."
  name.remove_suffix(sizeof(".weight") - 1);  // every layer spec but a bound ends in .weight
  return name;
}

// Tensors llama.cpp would apply to a gemma4a tower that Gemma 4 checkpoints do not have.
bool AppliedByLlamaCppOnly(const std::string& name) {
  auto ends = [&name](std::string_view s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return name == "a.conv1d.0.bias" || name == "a.conv1d.1.bias" ||
         name == "mm.a.soft_emb_norm.weight" ||
         (name.rfind("a.blk.", 0) == 0 && ends(".per_dim_k_scale.weight"));
}

std::set<std::string> KnownNames(const Gemma4AudioConfig& config) {
  Gemma4AudioConfig all = config;
  all.clipped_linears = true;
  if (all.n_out == 0) all.n_out = 1;  // names only: a.pre_encode.out.*
  std::set<std::string> names;
  for (const AudioTensorSpec& spec : Gemma4AudioTensorList(all)) names.insert(spec.name);
  return names;
}

}  // namespace

Gemma4AudioWeights Gemma4AudioWeights::Bind(const GgufFile& file, const Gemma4AudioConfig& c) {
  for (const TensorInfo& t : file.tensors()) {
    if (AppliedByLlamaCppOnly(t.name)) {
      Fail(ErrorKind::kUnsupported,
           file.path() + ": tensor '" + t.name +
               "' is not part of Gemma 4's audio tower; tandem does not apply it");
    }
  }
  TensorBinder b(file);
  Gemma4AudioWeights w;
  w.layers.resize(c.n_layer);
  for (const AudioTensorSpec& spec : Gemma4AudioTensorList(c)) {
    const TensorInfo* t = b.Find(spec.name, spec.ne, spec.required);
    if (t == nullptr) continue;
    Gemma4AudioLayerWeights* layer = spec.layer >= 0 ? &w.layers[spec.layer] : nullptr;
    const std::string& n = spec.name;
    switch (spec.role) {
      case AudioTensorRole::kSubsampleConv:
        (n == "a.conv1d.0.weight" ? w.conv0 : w.conv1) = b.Vector(*t);
        break;
      case AudioTensorRole::kSubsampleNorm:
        (n == "a.conv1d.0.norm.weight" ? w.conv0_norm : w.conv1_norm) = b.Vector(*t);
        break;
      case AudioTensorRole::kInputProjection:
        w.input_projection.w = CheckedMatrix(b, *t);
        break;
      case AudioTensorRole::kMatrix: {
        const kernels::WeightMatrix m = CheckedMatrix(b, *t);
        if (layer == nullptr) {
          (n == "a.pre_encode.out.weight" ? w.output_proj : w.mm_input_projection).w = m;
          break;
        }
        const std::string_view base = LayerBase(n);
        if (base == "attn_k_rel") {
          layer->attn_k_rel = m;
          break;
        }
        ClippedLinear* linear = LinearOf(*layer, base);
        if (linear == nullptr) Fail(ErrorKind::kInternal, "gemma4a: unhandled linear " + n);
        linear->w = m;
        BindClampBounds(b, AudioLayerTensorName(spec.layer, std::string(base)), *linear);
        break;
      }
      case AudioTensorRole::kNorm: {
        std::vector<float>* gain = NormOf(*layer, LayerBase(n));
        if (gain == nullptr) Fail(ErrorKind::kInternal, "gemma4a: unhandled norm " + n);
        *gain = b.Vector(*t);
        break;
      }
      case AudioTensorRole::kPerDimScale:
        layer->per_dim_scale = b.Vector(*t);
        break;
      case AudioTensorRole::kDepthwiseConv:
        if (t->type != TensorType::kF32) {
          Fail(ErrorKind::kInvalidArgument, file.path() + ": tensor '" + n + "' has type " +
                                                std::string(TensorTypeName(t->type)) +
                                                ", expected f32 (as llama.cpp reads it)");
        }
        layer->conv_dw = b.Vector(*t);
        break;
      case AudioTensorRole::kClampBound:
        break;  // read with their linear
      case AudioTensorRole::kOutputBias:
        w.output_bias = b.Vector(*t);
        break;
    }
  }

  const std::set<std::string> known = KnownNames(c);
  size_t unknown = 0;
  std::string first;
  for (const TensorInfo& t : file.tensors()) {
    const bool audio = t.name.rfind("a.", 0) == 0 || t.name.rfind("mm.a.", 0) == 0;
    if (audio && known.count(t.name) == 0) {
      if (unknown++ == 0) first = t.name;
    }
  }
  if (unknown > 0) {
    LogWarn(file.path() + ": ignoring " + std::to_string(unknown) +
            " audio tensor(s) gemma4a does not use, e.g. '" + first + "'");
  }
  return w;
}

void Gemma4AudioWeights::PackPanels() {
  // conv0 is [C0][1·3·3], conv1 [C1][C0·3·3]: conv1's fan-in is conv0's size.
  const auto kernel_panels = [](const std::vector<float>& k, size_t cols) {
    return kernels::PackPanels(kernels::DenseWeightMatrix(TensorType::kF32, k.data(),
                                                          static_cast<int64_t>(k.size() / cols),
                                                          static_cast<int64_t>(cols)));
  };
  if (conv0_panels.empty()) conv0_panels = kernel_panels(conv0, 9);
  if (conv1_panels.empty()) conv1_panels = kernel_panels(conv1, conv0.size());
  std::vector<ClippedLinear*> linears = {&input_projection, &output_proj, &mm_input_projection};
  for (Gemma4AudioLayerWeights& l : layers) {
    for (ClippedLinear* m : {&l.ffn_up, &l.ffn_down, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_out,
                             &l.conv_pw1, &l.conv_pw2, &l.ffn_up_1, &l.ffn_down_1}) {
      linears.push_back(m);
    }
  }
  for (ClippedLinear* m : linears) {
    if (m->w.data == nullptr || m->panels || !kernels::CanPackPanels(m->w.type)) continue;
    m->panels = std::make_shared<const kernels::PanelMatrix>(kernels::PackPanels(m->w));
    ReleaseMappedPages(m->w.data, static_cast<size_t>(m->w.rows) * m->w.row_bytes);
  }
}

void Gemma4AudioWeights::Pack() {
  std::vector<kernels::WeightMatrix*> matrices = {&input_projection.w, &mm_input_projection.w};
  if (output_proj.w.data != nullptr) matrices.push_back(&output_proj.w);
  for (Gemma4AudioLayerWeights& l : layers) {
    for (ClippedLinear* m : {&l.ffn_up, &l.ffn_down, &l.attn_q, &l.attn_k, &l.attn_v, &l.attn_out,
                             &l.conv_pw1, &l.conv_pw2, &l.ffn_up_1, &l.ffn_down_1}) {
      matrices.push_back(&m->w);
    }
    if (l.attn_k_rel.data != nullptr) matrices.push_back(&l.attn_k_rel);
  }
  kernels::PackMatrices(matrices, packed);
}

}  // namespace tandem
