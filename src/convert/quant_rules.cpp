#include "convert/quant_rules.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <numeric>

#include "base/error.h"

namespace tandem {
namespace {

using T = TensorType;
using P = QuantPreset;

enum class Category {
  kTokenEmbd,
  kOutput,
  kAttnQ,
  kAttnK,
  kAttnV,
  kAttnQkv,
  kAttnKvB,
  kAttnOutput,
  kFfnUp,
  kFfnGate,
  kFfnDown,
  kOther,
};

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// llama.cpp's broad categories, by name (order matters: "ffn_gate_up_exps" is a gate tensor).
Category CategoryOf(std::string_view name) {
  if (name == "output.weight") return Category::kOutput;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") {
    return Category::kTokenEmbd;
  }
  if (Contains(name, "attn_qkv.weight")) return Category::kAttnQkv;
  if (Contains(name, "attn_kv_b.weight")) return Category::kAttnKvB;
  if (Contains(name, "attn_v.weight")) return Category::kAttnV;
  if (Contains(name, "attn_k.weight")) return Category::kAttnK;
  if (Contains(name, "attn_q.weight")) return Category::kAttnQ;
  if (Contains(name, "attn_output.weight")) return Category::kAttnOutput;
  if (Contains(name, "ffn_up")) return Category::kFfnUp;
  if (Contains(name, "ffn_gate")) return Category::kFfnGate;
  if (Contains(name, "ffn_down")) return Category::kFfnDown;
  return Category::kOther;
}

bool IsAttnVLike(Category c) {
  return c == Category::kAttnV || c == Category::kAttnQkv || c == Category::kAttnKvB;
}

// The `blk.N.` index of a tensor name, or -1.
int LayerOf(std::string_view name) {
  if (name.substr(0, 4) != "blk.") return -1;
  int layer = -1;
  auto [end, ec] = std::from_chars(name.data() + 4, name.data() + name.size(), layer);
  if (ec != std::errc() || end == name.data() + name.size() || *end != '.') return -1;
  return layer;
}

bool UseMoreBits(int i, int n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

bool IsQuantizedType(T t) {
  return t != T::kF32 && t != T::kF16 && t != T::kBF16 && GetTensorTypeTraits(t).block_size > 1;
}

struct Counters {
  int n_attn_v = 0;
  int i_attn_v = 0;
  int i_ffn_down = 0;
  int i_ffn_gate = 0;
  int i_ffn_up = 0;
};

// The mix (llama_tensor_get_type_impl) restricted to the presets tandem offers.
T MixType(const QuantTensorDesc& t, Category cat, QuantPreset preset, T type, bool tied,
          const QuantModelDesc& model, Counters& k) {
  // Per-layer position of an FFN tensor: its running index, or for expert models its name.
  auto layer_index = [&](int running) {
    if (model.n_expert <= 1) return running;
    const int layer = LayerOf(t.name);
    if (layer < 0 || layer >= model.n_layer) {
      Fail(ErrorKind::kInvalidArgument, "quantize: cannot read a layer in [0, " +
                                            std::to_string(model.n_layer) + ") from tensor name '" +
                                            t.name + "'");
    }
    return layer;
  };
  const int n_layer = model.n_layer;
  if (cat == Category::kOutput || (tied && cat == Category::kTokenEmbd)) {
    if (t.ne[0] % GetTensorTypeTraits(type).block_size != 0) return T::kQ8_0;
    return type == T::kQ8_0 ? type : T::kQ6_K;
  }
  if (cat == Category::kTokenEmbd) return type;
  if (IsAttnVLike(cat)) {
    switch (preset) {
      case P::kQ2_K:
        type = model.n_gqa >= 4 ? T::kQ4_K : T::kQ3_K;
        break;
      case P::kQ3_K_M:
        type = k.i_attn_v < 2 ? T::kQ5_K : T::kQ4_K;
        break;
      case P::kQ3_K_L:
        type = T::kQ5_K;
        break;
      case P::kIQ4_NL:
      case P::kIQ4_XS:
        if (model.n_gqa >= 4) type = T::kQ5_K;
        break;
      case P::kQ4_K_M:
      case P::kQ5_K_M:
        if (UseMoreBits(k.i_attn_v, k.n_attn_v)) type = T::kQ6_K;
        break;
      case P::kQ4_K_S:
        if (k.i_attn_v < 4) type = T::kQ5_K;
        break;
      default:
        break;
    }
    if (model.n_expert == 8) type = T::kQ8_0;
    ++k.i_attn_v;
    return type;
  }
  if (cat == Category::kAttnK) return model.n_expert == 8 ? T::kQ8_0 : type;
  if (cat == Category::kFfnDown) {
    const int i = layer_index(k.i_ffn_down++);
    switch (preset) {
      case P::kQ2_K:
        return T::kQ3_K;
      case P::kQ3_K_M:
        return i < n_layer / 16 ? T::kQ5_K : T::kQ4_K;
      case P::kQ3_K_L:
        return T::kQ5_K;
      case P::kQ4_K_M:
      case P::kQ5_K_M:
        return UseMoreBits(i, n_layer) ? T::kQ6_K : type;
      case P::kQ4_K_S:
      case P::kIQ4_NL:
      case P::kIQ4_XS:
        return i < n_layer / 8 ? T::kQ5_K : type;
      default:
        return type;
    }
  }
  if (cat == Category::kAttnOutput) {
    if (model.n_expert == 8) {
      switch (preset) {
        case P::kQ2_K:
        case P::kQ3_K_S:
        case P::kQ3_K_M:
        case P::kQ4_K_S:
        case P::kQ4_K_M:
        case P::kIQ4_NL:
        case P::kIQ4_XS:
          return T::kQ5_K;
        default:
          return type;
      }
    }
    switch (preset) {
      case P::kQ2_K:
        return T::kQ3_K;
      case P::kQ3_K_M:
        return T::kQ4_K;
      case P::kQ3_K_L:
        return T::kQ5_K;
      default:
        return type;
    }
  }
  if (cat == Category::kAttnQkv) return type;  // handled with attn_v above
  if (cat == Category::kFfnGate) layer_index(k.i_ffn_gate++);
  if (cat == Category::kFfnUp) layer_index(k.i_ffn_up++);
  return type;
}

// llama.cpp's tensor_type_fallback for a row length that does not fit `type`'s blocks.
QuantChoice Fallback(const QuantTensorDesc& t, T type) {
  const uint64_t n = t.ne[0];
  if (n % GetTensorTypeTraits(type).block_size == 0) return {type, false};
  T next;
  switch (type) {
    case T::kQ4_K:
      next = T::kQ5_0;
      break;
    case T::kQ5_K:
      next = T::kQ5_1;
      break;
    case T::kQ6_K:
      next = T::kQ8_0;
      break;
    case T::kQ2_K:
    case T::kQ3_K:
      next = T::kQ4_0;
      break;
    case T::kIQ4_XS:
      next = T::kIQ4_NL;
      break;
    default:
      Fail(ErrorKind::kUnsupported,
           "quantize: tensor '" + t.name + "' has rows of " + std::to_string(n) +
               " values, not a multiple of " + std::string(TensorTypeName(type)) +
               "'s block size, and that type has no fallback (keep it with --keep-type)");
  }
  if (n % GetTensorTypeTraits(next).block_size != 0) next = T::kF16;
  return {next, true};
}

}  // namespace

const std::vector<QuantPresetInfo>& QuantPresets() {
  static const std::vector<QuantPresetInfo> presets = {
      {P::kQ4_0, "Q4_0", T::kQ4_0, 2},        {P::kQ4_1, "Q4_1", T::kQ4_1, 3},
      {P::kQ5_0, "Q5_0", T::kQ5_0, 8},        {P::kQ5_1, "Q5_1", T::kQ5_1, 9},
      {P::kQ8_0, "Q8_0", T::kQ8_0, 7},        {P::kQ2_K, "Q2_K", T::kQ2_K, 10},
      {P::kQ3_K_S, "Q3_K_S", T::kQ3_K, 11},   {P::kQ3_K_M, "Q3_K_M", T::kQ3_K, 12},
      {P::kQ3_K_L, "Q3_K_L", T::kQ3_K, 13},   {P::kQ4_K_S, "Q4_K_S", T::kQ4_K, 14},
      {P::kQ4_K_M, "Q4_K_M", T::kQ4_K, 15},   {P::kQ5_K_S, "Q5_K_S", T::kQ5_K, 16},
      {P::kQ5_K_M, "Q5_K_M", T::kQ5_K, 17},   {P::kQ6_K, "Q6_K", T::kQ6_K, 18},
      {P::kIQ4_NL, "IQ4_NL", T::kIQ4_NL, 25}, {P::kIQ4_XS, "IQ4_XS", T::kIQ4_XS, 30},
      {P::kF16, "F16", T::kF16, 1},           {P::kBF16, "BF16", T::kBF16, 32},
  };
  return presets;
}

std::optional<QuantPreset> ParseQuantPreset(std::string_view name) {
  for (const QuantPresetInfo& p : QuantPresets()) {
    if (p.name.size() == name.size() &&
        std::equal(name.begin(), name.end(), p.name.begin(), [](char a, char b) {
          return std::toupper(static_cast<unsigned char>(a)) == b;
        })) {
      return p.preset;
    }
  }
  return std::nullopt;
}

const QuantPresetInfo& GetQuantPresetInfo(QuantPreset preset) {
  for (const QuantPresetInfo& p : QuantPresets()) {
    if (p.preset == preset) return p;
  }
  Fail(ErrorKind::kInternal, "unknown quantization preset");
}

bool TensorAllowsQuantization(const QuantTensorDesc& t) {
  const std::string_view n = t.name;
  if (t.ne.size() < 2 || !EndsWith(n, "weight")) return false;
  for (std::string_view excluded : {"_norm.weight", "ffn_gate_inp.weight", "altup", "laurel",
                                    "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight",
                                    "attn_rel_b.weight", ".position_embd", ".patch_embd"}) {
    if (Contains(n, excluded)) return false;
  }
  return n != "position_embd.weight" && n != "token_types.weight";
}

std::vector<QuantChoice> ChooseQuantTypes(const std::vector<QuantTensorDesc>& tensors,
                                          QuantPreset preset, const QuantModelDesc& model,
                                          const std::set<std::string, std::less<>>& keep) {
  const QuantPresetInfo& info = GetQuantPresetInfo(preset);
  std::vector<Category> cats;
  bool tied = true;
  Counters k;
  for (const QuantTensorDesc& t : tensors) {
    cats.push_back(CategoryOf(t.name));
    if (cats.back() == Category::kOutput) tied = false;
    if (IsAttnVLike(cats.back())) ++k.n_attn_v;
  }
  // llama.cpp visits tensors by layer number, then name (its loader's weight map order).
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const int la = LayerOf(tensors[a].name), lb = LayerOf(tensors[b].name);
    return la != lb ? la < lb : tensors[a].name < tensors[b].name;
  });
  std::vector<QuantChoice> out(tensors.size());
  for (size_t i : order) {
    const QuantTensorDesc& t = tensors[i];
    out[i] = {t.type, false};
    // Kept tensors skip the mix entirely, like llama.cpp's manual overrides (no counter moves).
    if (!TensorAllowsQuantization(t) || keep.count(t.name)) continue;
    out[i] = {info.default_type, false};
    if (IsQuantizedType(info.default_type)) {
      out[i] = Fallback(t, MixType(t, cats[i], preset, info.default_type, tied, model, k));
    }
  }
  return out;
}

}  // namespace tandem
