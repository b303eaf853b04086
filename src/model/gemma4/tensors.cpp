#include "model/gemma4/tensors.h"

namespace tandem {

std::string LayerTensorName(int layer, const char* suffix) {
  return "blk." + std::to_string(layer) + "." + suffix;
}

std::vector<float> Gemma4RopeFreqs(const Gemma4Config& c, float partial_rotary_factor) {
  const int n_pairs = c.head_dim_full / 2;
  const int rotated = static_cast<int>(partial_rotary_factor * c.head_dim_full / 2);
  std::vector<float> f(n_pairs, 1e30f);
  for (int i = 0; i < rotated && i < n_pairs; ++i) f[i] = 1.0f;
  return f;
}

std::vector<Gemma4TensorSpec> Gemma4TensorList(const Gemma4Config& c) {
  using R = TensorRole;
  const uint64_t d = c.n_embd, v = c.n_vocab, p = c.n_embd_per_layer, l_all = c.n_layer;
  std::vector<Gemma4TensorSpec> out;
  auto add = [&out](std::string name, std::vector<uint64_t> ne, R role, bool required, int layer) {
    out.push_back({std::move(name), std::move(ne), role, required, layer});
  };
  add("token_embd.weight", {d, v}, R::kEmbedding, true, -1);
  add("output_norm.weight", {d}, R::kNorm, true, -1);
  if (p > 0) {
    add("per_layer_token_embd.weight", {l_all * p, v}, R::kEmbedding, true, -1);
    add("per_layer_model_proj.weight", {d, l_all * p}, R::kMatrix, true, -1);
    add("per_layer_proj_norm.weight", {p}, R::kNorm, true, -1);
  }
  bool any_full = false;
  for (const auto& layer : c.layers) any_full |= !layer.sliding;
  if (any_full) add("rope_freqs.weight", {uint64_t(c.head_dim_full) / 2}, R::kRopeFreqs, false, -1);

  for (int l = 0; l < c.n_layer; ++l) {
    const Gemma4LayerConfig& lc = c.layers[l];
    const uint64_t hd = lc.head_dim, q = uint64_t(c.n_head) * hd, kv = uint64_t(lc.n_head_kv) * hd;
    auto name = [l](const char* s) { return LayerTensorName(l, s); };
    add(name("attn_norm.weight"), {d}, R::kNorm, true, l);
    add(name("attn_q.weight"), {d, q}, R::kMatrix, true, l);
    add(name("attn_q_norm.weight"), {hd}, R::kNorm, true, l);
    if (lc.owns_kv) {
      add(name("attn_k.weight"), {d, kv}, R::kMatrix, true, l);
      if (lc.sliding || !c.full_v_equals_k)
        add(name("attn_v.weight"), {d, kv}, R::kMatrix, true, l);
      add(name("attn_k_norm.weight"), {hd}, R::kNorm, true, l);
    }
    add(name("attn_output.weight"), {q, d}, R::kMatrix, true, l);
    add(name("post_attention_norm.weight"), {d}, R::kNorm, true, l);
    add(name("ffn_norm.weight"), {d}, R::kNorm, true, l);
    add(name("ffn_gate.weight"), {d, uint64_t(lc.n_ff)}, R::kMatrix, true, l);
    add(name("ffn_up.weight"), {d, uint64_t(lc.n_ff)}, R::kMatrix, true, l);
    add(name("ffn_down.weight"), {uint64_t(lc.n_ff), d}, R::kMatrix, true, l);
    add(name("post_ffw_norm.weight"), {d}, R::kNorm, true, l);
    if (c.n_expert > 0) {
      const uint64_t e = c.n_expert, f = c.n_ff_expert;
      add(name("ffn_gate_inp.weight"), {d, e}, R::kMatrix, true, l);
      add(name("ffn_gate_inp.scale"), {d}, R::kScale, true, l);
      add(name("pre_ffw_norm_2.weight"), {d}, R::kNorm, true, l);
      add(name("post_ffw_norm_1.weight"), {d}, R::kNorm, true, l);
      add(name("post_ffw_norm_2.weight"), {d}, R::kNorm, true, l);
      add(name("ffn_gate_up_exps.weight"), {d, 2 * f, e}, R::kMatrix, true, l);
      add(name("ffn_down_exps.weight"), {f, d, e}, R::kMatrix, true, l);
      add(name("ffn_down_exps.scale"), {e}, R::kScale, false, l);
    }
    if (p > 0) {
      add(name("inp_gate.weight"), {d, p}, R::kMatrix, true, l);
      add(name("proj.weight"), {p, d}, R::kMatrix, true, l);
      add(name("post_norm.weight"), {d}, R::kNorm, true, l);
    }
    add(name("layer_output_scale.weight"), {1}, R::kScale, false, l);
  }
  return out;
}

}  // namespace tandem
