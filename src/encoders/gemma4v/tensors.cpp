#include "encoders/gemma4v/tensors.h"

#include "encoders/clipped_linear.h"

namespace tandem {

std::string VisionLayerTensorName(int layer, const std::string& suffix) {
  return "v.blk." + std::to_string(layer) + "." + suffix;
}

std::vector<VisionTensorSpec> Gemma4VisionTensorList(const Gemma4VisionConfig& c) {
  using R = VisionTensorRole;
  const uint64_t d = c.n_embd, p = c.patch_size, f = c.n_ff, hd = c.head_dim;
  const uint64_t q = uint64_t(c.n_head) * hd, kv = uint64_t(c.n_head_kv) * hd;
  std::vector<VisionTensorSpec> out;
  auto add = [&out](std::string name, std::vector<uint64_t> ne, R role, bool required, int layer) {
    out.push_back({std::move(name), std::move(ne), role, required, layer});
  };
  add("v.patch_embd.weight", {p, p, 3, d}, R::kPatchEmbedding, true, -1);
  add("v.position_embd.weight", {d, uint64_t(c.n_pos), 2}, R::kPositionTable, true, -1);
  for (int l = 0; l < c.n_layer; ++l) {
    auto name = [l](const std::string& s) { return VisionLayerTensorName(l, s); };
    auto linear = [&](const char* base, uint64_t in, uint64_t out_features) {
      add(name(std::string(base) + ".weight"), {in, out_features}, R::kMatrix, true, l);
      if (!c.clipped_linears) return;
      for (const char* suffix : kClampSuffixes) {
        add(name(base + std::string(suffix)), {1}, R::kClampBound, false, l);
      }
    };
    add(name("ln1.weight"), {d}, R::kNorm, true, l);
    linear("attn_q", d, q);
    linear("attn_k", d, kv);
    linear("attn_v", d, kv);
    add(name("attn_q_norm.weight"), {hd}, R::kHeadNorm, true, l);
    add(name("attn_k_norm.weight"), {hd}, R::kHeadNorm, true, l);
    linear("attn_out", q, d);
    add(name("attn_post_norm.weight"), {d}, R::kNorm, true, l);
    add(name("ln2.weight"), {d}, R::kNorm, true, l);
    linear("ffn_gate", d, f);
    linear("ffn_up", d, f);
    linear("ffn_down", f, d);
    add(name("ffn_post_norm.weight"), {d}, R::kNorm, true, l);
    if (c.layer_scale) add(name("out_scale.weight"), {1}, R::kLayerScale, false, l);
  }
  if (c.standardize) {
    add("v.std_bias", {d}, R::kStdBias, false, -1);
    add("v.std_scale", {d}, R::kStdScale, false, -1);
  }
  add("mm.input_projection.weight", {d, uint64_t(c.n_embd_text)}, R::kMatrix, true, -1);
  return out;
}

}  // namespace tandem
