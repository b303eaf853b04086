// Typed views of a gemma4a tower's tensors in an mmproj file, bound by name from the tensor list
// and checked against the config. Matrices stay in the memory mapping (or their repacked
// copies); convolution kernels, gains and scales are copied to f32.
#pragma once

#include <memory>
#include <vector>

#include "encoders/clipped_linear.h"
#include "encoders/gemma4a/config.h"
#include "kernels/matmul.h"
#include "kernels/matmul_repack.h"

namespace tandem {

class GgufFile;

// An optional norm's gain is empty when the file does not have it (the norm is then skipped, as
// llama.cpp skips it).
struct Gemma4AudioLayerWeights {
  // FFN 1 (macaron half step).
  std::vector<float> ffn_norm;       // [Da]
  ClippedLinear ffn_up;              // [F][Da]
  ClippedLinear ffn_down;            // [Da][F]
  std::vector<float> ffn_post_norm;  // [Da] or empty
  // Chunked local attention.
  std::vector<float> attn_pre_norm;      // [Da] or empty
  ClippedLinear attn_q, attn_k, attn_v;  // [Da][Da]
  ClippedLinear attn_out;                // [Da][Da]
  kernels::WeightMatrix attn_k_rel;      // [Da][Da]; data null: no relative position term
  std::vector<float> per_dim_scale;      // [hd] (stored after softplus) or empty
  std::vector<float> attn_post_norm;     // [Da] or empty
  // Light conv module.
  std::vector<float> conv_norm;  // [Da] or empty: the pre-norm (GGUF name conv_norm)
  ClippedLinear conv_pw1;        // [2·Da][Da]: value half, then gate half
  std::vector<float> conv_dw;    // [Da][K]: tap k of channel c at c·K + k, oldest first
  std::vector<float> norm_conv;  // [Da] or empty: after the depthwise conv
  ClippedLinear conv_pw2;        // [Da][Da]
  // FFN 2 (macaron half step) and the output norm.
  std::vector<float> ffn_norm_1;       // [Da]
  ClippedLinear ffn_up_1;              // [F][Da]
  ClippedLinear ffn_down_1;            // [Da][F]
  std::vector<float> ffn_post_norm_1;  // [Da] or empty
  std::vector<float> ln2;              // [Da] or empty
};

struct Gemma4AudioWeights {
  // The subsampling convs as [C_out][C_in·3·3] (input channel, then time, then frequency; GGUF
  // ne {3 (freq), 3 (time), C_in, C_out}), and their channel LayerNorm gains ([C_out] or empty).
  std::vector<float> conv0, conv1;
  std::vector<float> conv0_norm, conv1_norm;
  kernels::PanelMatrix conv0_panels, conv1_panels;  // the kernels as panels, after PackPanels()
  ClippedLinear input_projection;                   // [Da][Fq·C1], no bounds
  std::vector<Gemma4AudioLayerWeights> layers;
  ClippedLinear output_proj;       // a.pre_encode.out [O][Da], no bounds; w.data null when absent
  std::vector<float> output_bias;  // [O] or empty
  ClippedLinear mm_input_projection;  // mm.a.input_projection [Dt][O or Da], no bounds

  // Binds every tensor of Gemma4AudioTensorList(config) from `file` (config from the same file).
  // Throws Error naming the file and tensor: a missing required tensor, a wrong shape, a type
  // the kernels cannot read, a depthwise kernel that is not F32, a clamp bound that is not one
  // F32 value, or a tensor llama.cpp would apply that Gemma 4 has not (a.conv1d.N.bias,
  // a.blk.N.per_dim_k_scale.weight, mm.a.soft_emb_norm.weight). Other `a.` and `mm.a.` tensors
  // are ignored with one warning line.
  static Gemma4AudioWeights Bind(const GgufFile& file, const Gemma4AudioConfig& config);

  // Interleaved copies of the quantized matrices the active kernel path reads packed (see
  // Gemma4Weights::Pack). Empty unless Pack() ran.
  std::vector<std::shared_ptr<const kernels::PackedMatrix>> packed;
  void Pack();
  // The F32/F16/BF16 linears (the layers', the input projection, the output projection and the
  // projector) as panels (kernels/matmul_panels.h), read instead of their mapped rows; their
  // mapped pages are released. The subsampling kernels too.
  void PackPanels();
};

}  // namespace tandem
