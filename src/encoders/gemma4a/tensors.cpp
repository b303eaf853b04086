#include "encoders/gemma4a/tensors.h"

#include "encoders/clipped_linear.h"

namespace tandem {

std::string AudioLayerTensorName(int layer, const std::string& suffix) {
  return "a.blk." + std::to_string(layer) + "." + suffix;
}

std::vector<AudioTensorSpec> Gemma4AudioTensorList(const Gemma4AudioConfig& c) {
  using R = AudioTensorRole;
  const uint64_t d = c.n_embd, f = c.n_ff, hd = c.head_dim();
  const uint64_t c0 = c.sub_channels0, c1 = c.sub_channels1;
  std::vector<AudioTensorSpec> out;
  auto add = [&out](std::string name, std::vector<uint64_t> ne, R role, bool required, int layer) {
    out.push_back({std::move(name), std::move(ne), role, required, layer});
  };
  add("a.conv1d.0.weight", {3, 3, 1, c0}, R::kSubsampleConv, true, -1);
  add("a.conv1d.0.norm.weight", {c0}, R::kSubsampleNorm, false, -1);
  add("a.conv1d.1.weight", {3, 3, c0, c1}, R::kSubsampleConv, true, -1);
  add("a.conv1d.1.norm.weight", {c1}, R::kSubsampleNorm, false, -1);
  add("a.input_projection.weight", {uint64_t(c.sub_width()), d}, R::kInputProjection, true, -1);
  for (int l = 0; l < c.n_layer; ++l) {
    auto name = [l](const std::string& s) { return AudioLayerTensorName(l, s); };
    auto linear = [&](const char* base, uint64_t in, uint64_t out_features) {
      add(name(std::string(base) + ".weight"), {in, out_features}, R::kMatrix, true, l);
      if (!c.clipped_linears) return;
      for (const char* suffix : kClampSuffixes) {
        add(name(base + std::string(suffix)), {1}, R::kClampBound, false, l);
      }
    };
    auto norm = [&](const char* base, bool required) {
      add(name(std::string(base) + ".weight"), {d}, R::kNorm, required, l);
    };
    // FFN 1 (macaron half step).
    norm("ffn_norm", true);
    linear("ffn_up", d, f);
    linear("ffn_down", f, d);
    norm("ffn_post_norm", false);
    // Chunked local attention with relative positions.
    norm("attn_pre_norm", false);
    linear("attn_q", d, d);
    linear("attn_k", d, d);
    linear("attn_v", d, d);
    linear("attn_out", d, d);
    add(name("attn_k_rel.weight"), {d, d}, R::kMatrix, false, l);
    add(name("per_dim_scale.weight"), {hd}, R::kPerDimScale, false, l);
    norm("attn_post_norm", false);
    // Light conv module (conv_norm is the pre-norm, norm_conv the one after the depthwise conv).
    norm("conv_norm", false);
    linear("conv_pw1", d, 2 * d);
    add(name("conv_dw.weight"), {uint64_t(Gemma4AudioConfig::kConvKernel), d}, R::kDepthwiseConv,
        true, l);
    norm("norm_conv", false);
    linear("conv_pw2", d, d);
    // FFN 2 (macaron half step) and the layer's output norm.
    norm("ffn_norm_1", true);
    linear("ffn_up_1", d, f);
    linear("ffn_down_1", f, d);
    norm("ffn_post_norm_1", false);
    norm("ln2", false);
  }
  if (c.n_out > 0) {
    add("a.pre_encode.out.weight", {d, uint64_t(c.n_out)}, R::kMatrix, false, -1);
    add("a.pre_encode.out.bias", {uint64_t(c.n_out)}, R::kOutputBias, false, -1);
  }
  add("mm.a.input_projection.weight", {uint64_t(c.out_width()), uint64_t(c.n_embd_text)},
      R::kMatrix, true, -1);
  return out;
}

}  // namespace tandem
