// Typed views of a Gemma 4 GGUF's tensors, bound by name from the tensor list and checked
// against the config. Matrices stay in the memory mapping; small 1-D tensors are copied to f32.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/embedding.h"
#include "kernels/matmul.h"
#include "kernels/matmul_repack.h"
#include "model/gemma4/config.h"

namespace tandem {

class GgufFile;

struct Gemma4LayerWeights {
  std::vector<float> attn_norm;            // [D]
  kernels::WeightMatrix attn_q;            // [H*hd][D]
  std::vector<float> attn_q_norm;          // [hd]
  kernels::WeightMatrix attn_k, attn_v;    // [Hkv*hd][D]; data null when absent (shared; V = K)
  std::vector<float> attn_k_norm;          // [hd] (KV-owning layers)
  kernels::WeightMatrix attn_output;       // [D][H*hd]
  std::vector<float> post_attention_norm;  // [D]
  std::vector<float> ffn_norm;             // [D]
  kernels::WeightMatrix ffn_gate, ffn_up;  // [n_ff][D]
  kernels::WeightMatrix ffn_down;          // [D][n_ff]
  std::vector<float> post_ffw_norm;        // [D]
  float output_scale = 1.0f;               // layer_output_scale: scales the whole residual

  // Per-layer embeddings (E2B/E4B).
  kernels::WeightMatrix ple_gate;    // inp_gate [P][D]
  kernels::WeightMatrix ple_proj;    // proj [D][P]
  std::vector<float> ple_post_norm;  // post_norm [D]

  // Mixture of experts (26B-A4B).
  kernels::WeightMatrix router;           // ffn_gate_inp [E][D]
  std::vector<float> router_scale;        // ffn_gate_inp.scale [D]
  std::vector<float> pre_ffw_norm_2;      // expert input norm [D]
  std::vector<float> post_ffw_norm_1;     // dense-branch output norm [D]
  std::vector<float> post_ffw_norm_2;     // expert-branch output norm [D]
  kernels::WeightMatrix experts_gate_up;  // expert 0 of ffn_gate_up_exps [2*F][D]
  kernels::WeightMatrix experts_down;     // expert 0 of ffn_down_exps [D][F]
  size_t expert_gate_up_bytes = 0;        // stride between experts
  size_t expert_down_bytes = 0;
  std::vector<float> expert_scale;  // ffn_down_exps.scale [E] (1 when absent)

  kernels::WeightMatrix ExpertGateUp(int e) const;
  kernels::WeightMatrix ExpertDown(int e) const;
};

// A matrix a forward multiplies each row by, and how many times (MoE: expert 0's matrices stand
// for the n_expert_used experts a row is routed to).
struct MatrixUse {
  kernels::WeightMatrix matrix;
  int per_row = 1;
};

struct Gemma4Weights {
  kernels::EmbeddingTable token_embd;  // [V][D]
  kernels::WeightMatrix output;        // LM head [V][D]: output.weight, or token_embd when tied
  std::vector<float> output_norm;      // [D]
  std::vector<float> rope_freqs;       // [head_dim_full / 2] or empty
  kernels::EmbeddingTable per_layer_token_embd;  // [V][L*P] (PLE only)
  kernels::WeightMatrix per_layer_model_proj;    // [L*P][D]
  std::vector<float> per_layer_proj_norm;        // [P]
  std::vector<Gemma4LayerWeights> layers;

  // Binds every tensor of Gemma4TensorList(config). Throws Error naming the tensor and the
  // expected vs actual shape or type; missing optional tensors take their defaults. Tensors of
  // other modalities (vision, audio) are ignored with one warning line.
  // `also_known` names tensors the caller binds itself (no "unknown tensor" warning for them).
  static Gemma4Weights Bind(const GgufFile& file, const Gemma4Config& config,
                            const std::vector<std::string>& also_known = {});

  // Interleaved copies (kernels/matmul_repack.h) of the dense matrices the active kernel path
  // reads packed; each such matrix's `packed` points into one. Empty unless Pack() ran.
  std::vector<std::shared_ptr<const kernels::PackedMatrix>> packed;
  // Packs those matrices, and `also` (a caller's own matrices, e.g. the assistant's
  // projections), and releases the resident pages of their row-major originals (row gathers and
  // the token embedding read them again from the file).
  void Pack(const std::vector<kernels::WeightMatrix*>& also = {});
  // Bytes of those copies (0 unless Pack() ran).
  size_t PackedBytes() const;
  // The matrices a forward multiplies each row by (the LM head: rows that want logits).
  std::vector<MatrixUse> MatricesPerRow(const Gemma4Config& config) const;
};

}  // namespace tandem
