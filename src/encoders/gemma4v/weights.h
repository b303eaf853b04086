// Typed views of a gemma4v tower's tensors in an mmproj file, bound by name from the tensor list
// and checked against the config. Matrices stay in the memory mapping (or their repacked
// copies); gains and scalars are copied to f32.
#pragma once

#include <memory>
#include <vector>

#include "encoders/clipped_linear.h"
#include "encoders/gemma4v/config.h"
#include "kernels/embedding.h"
#include "kernels/matmul.h"
#include "kernels/matmul_repack.h"

namespace tandem {

class GgufFile;

struct Gemma4VisionLayerWeights {
  std::vector<float> ln1;             // [Dv] pre-attention norm
  ClippedLinear attn_q;               // [H·hd][Dv]
  ClippedLinear attn_k, attn_v;       // [Hkv·hd][Dv]
  std::vector<float> attn_q_norm;     // [hd] per-head
  std::vector<float> attn_k_norm;     // [hd]
  ClippedLinear attn_out;             // [Dv][H·hd]
  std::vector<float> attn_post_norm;  // [Dv]
  std::vector<float> ln2;             // [Dv] pre-FFN norm
  ClippedLinear ffn_gate, ffn_up;     // [F][Dv]
  ClippedLinear ffn_down;             // [Dv][F]
  std::vector<float> ffn_post_norm;   // [Dv]
  float out_scale = 1.0f;             // v.blk.N.out_scale.weight, 1 when absent
  bool has_out_scale = false;
};

struct Gemma4VisionWeights {
  // The patch embedding as a matrix [Dv][3·p·p] over patches flattened in (channel, row, col)
  // order: the GGUF conv kernel {p, p, 3, Dv} read as rows of ne0·ne1·ne2.
  kernels::WeightMatrix patch_embd;
  // The position tables as one [2·S][Dv] table: row c is column c's vector, row S + r row r's.
  kernels::EmbeddingTable position_embd;
  std::vector<Gemma4VisionLayerWeights> layers;
  std::vector<float> std_bias, std_scale;  // [Dv] each, or empty (no standardization)
  kernels::WeightMatrix input_projection;  // mm.input_projection [Dt][Dv]

  // Binds every tensor of Gemma4VisionTensorList(config) from `file` (config from the same
  // file). Throws Error naming the file and tensor: a missing required tensor, a wrong shape, a
  // type the kernels cannot read, a clamp bound or scale that is not one F32 value. Other `v.` and
  // `mm.` tensors (not `mm.a.`) are ignored with one warning line.
  static Gemma4VisionWeights Bind(const GgufFile& file, const Gemma4VisionConfig& config);

  // Interleaved copies of the quantized matrices the active kernel path reads packed (see
  // Gemma4Weights::Pack); each such matrix's `packed` points into one. Empty unless Pack() ran.
  std::vector<std::shared_ptr<const kernels::PackedMatrix>> packed;
  void Pack();
  // The layers' f32/f16/bf16 linears as panels (ClippedLinear::panels), their mapped pages
  // released: the encoder always reads float weights this way, so its results do not depend
  // on --no-repack.
  void PackPanels();
};

}  // namespace tandem
