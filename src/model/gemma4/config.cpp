#include "model/gemma4/config.h"

#include <string>

#include "base/error.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

namespace tandem {
namespace {

constexpr std::string_view kAssistantArch = "gemma4-assistant";

int ToInt(uint32_t v, const std::string& source, const std::string& key) {
  if (v > 1u << 30) {
    Fail(ErrorKind::kCorrupt, source + ": " + key + " = " + std::to_string(v) + " is too large");
  }
  return static_cast<int>(v);
}

bool AllEqual(const std::vector<int>& v) {
  for (int x : v) {
    if (x != v[0]) return false;
  }
  return true;
}

}  // namespace

void Gemma4Config::Derive(const std::string& source) {
  auto bad = [&source](const std::string& what) {
    Fail(ErrorKind::kInvalidArgument, source + ": " + what);
  };
  if (n_layer <= 0 || static_cast<int>(layers.size()) != n_layer) bad("layer count mismatch");
  if (n_embd <= 0 || n_head <= 0 || n_vocab <= 0)
    bad("embedding, head and vocab sizes must be > 0");
  if (!q_only && (shared_kv_layers < 0 || shared_kv_layers >= n_layer)) {
    bad("shared_kv_layers = " + std::to_string(shared_kv_layers) + " must be in [0, block_count)");
  }
  if (sliding_window <= 0) bad("sliding_window must be > 0");
  const int n_kv = q_only ? 0 : n_layer_kv();
  // The last owning layer of each type serves the shared layers (llama.cpp requires the last
  // owning layer to be full and the one before it sliding when sharing is on).
  int last_swa = -1, last_full = -1;
  for (int l = 0; l < n_kv; ++l) (layers[l].sliding ? last_swa : last_full) = l;
  for (int l = 0; l < n_layer; ++l) {
    Gemma4LayerConfig& c = layers[l];
    c.head_dim = c.sliding ? head_dim_swa : head_dim_full;
    c.rope_base = c.sliding ? rope_base_swa : rope_base_full;
    c.n_rot = c.sliding ? n_rot_swa : n_rot_full;
    c.owns_kv = l < n_kv;
    c.kv_source = c.owns_kv ? l : (c.sliding ? last_swa : last_full);
    const std::string at = "layer " + std::to_string(l) + ": ";
    if (c.kv_source < 0 && !q_only)
      bad(at + "KV-shared layer has no earlier owning layer of its type");
    if (!c.owns_kv && !q_only && layers[c.kv_source].n_head_kv != c.n_head_kv) {
      bad(at + "KV-shared layer has n_head_kv " + std::to_string(c.n_head_kv) + " but its source " +
          std::to_string(c.kv_source) + " has " + std::to_string(layers[c.kv_source].n_head_kv));
    }
    if (c.head_dim <= 0 || c.head_dim % 2 != 0) bad(at + "head_dim must be even and > 0");
    if (c.n_head_kv <= 0 || n_head % c.n_head_kv != 0) {
      bad(at + "head_count " + std::to_string(n_head) + " is not a multiple of head_count_kv " +
          std::to_string(c.n_head_kv));
    }
    if (c.n_rot <= 0 || c.n_rot > c.head_dim || c.n_rot % 2 != 0) {
      bad(at + "rope dimension count " + std::to_string(c.n_rot) + " must be even, in (0, " +
          std::to_string(c.head_dim) + "]");
    }
    if (c.n_ff <= 0) bad(at + "feed_forward_length must be > 0");
  }
  if (n_expert > 0 && (n_expert_used <= 0 || n_expert_used > n_expert || n_ff_expert <= 0)) {
    bad("expert_used_count must be in [1, expert_count] and expert_feed_forward_length > 0");
  }
}

Gemma4Config Gemma4Config::FromGguf(const GgufFile& file, std::string_view want_arch) {
  const std::string& src = file.path();
  std::string_view arch = file.GetString("general.architecture");
  if (arch != want_arch) {
    Fail(ErrorKind::kInvalidArgument, src + ": general.architecture is '" + std::string(arch) +
                                          "', expected '" + std::string(want_arch) + "'");
  }
  auto Key = [want_arch](const char* suffix) { return std::string(want_arch) + "." + suffix; };
  auto u32 = [&](const char* suffix) {
    std::string key = Key(suffix);
    return ToInt(file.GetU32(key), src, key);
  };
  auto opt_u32 = [&](const char* suffix, int fallback) {
    std::string key = Key(suffix);
    auto v = file.FindU32(key);
    return v ? ToInt(*v, src, key) : fallback;
  };
  auto opt_f32 = [&](const char* suffix, float fallback) {
    auto v = file.FindF32(Key(suffix));
    return v ? *v : fallback;
  };

  Gemma4Config c;
  c.q_only = want_arch == kAssistantArch;
  c.n_embd = u32("embedding_length");
  c.n_layer = u32("block_count");
  c.n_head = u32("attention.head_count");
  c.n_ctx_train = u32("context_length");
  c.n_embd_per_layer = opt_u32("embedding_length_per_layer_input", 0);
  c.sliding_window = u32("attention.sliding_window");
  c.shared_kv_layers = opt_u32("attention.shared_kv_layers", 0);
  c.head_dim_full = u32("attention.key_length");
  c.head_dim_swa = u32("attention.key_length_swa");
  if (opt_u32("attention.value_length", c.head_dim_full) != c.head_dim_full ||
      opt_u32("attention.value_length_swa", c.head_dim_swa) != c.head_dim_swa) {
    Fail(ErrorKind::kUnsupported, src + ": value_length differs from key_length");
  }
  c.rms_eps = file.GetF32(Key("attention.layer_norm_rms_epsilon"));
  c.rope_base_full = opt_f32("rope.freq_base", 1e6f);
  c.rope_base_swa = opt_f32("rope.freq_base_swa", 1e4f);
  c.n_rot_full = opt_u32("rope.dimension_count", c.head_dim_full);
  c.n_rot_swa = opt_u32("rope.dimension_count_swa", c.head_dim_swa);
  c.final_logit_softcap = opt_f32("final_logit_softcapping", 0.0f);
  c.n_expert = opt_u32("expert_count", 0);
  c.n_expert_used = opt_u32("expert_used_count", 0);
  c.n_ff_expert = opt_u32("expert_feed_forward_length", 0);

  const auto n = static_cast<uint32_t>(c.n_layer);
  if (n == 0 || n > 4096) {
    Fail(ErrorKind::kCorrupt,
         src + ": " + Key("block_count") + " = " + std::to_string(n) + " is out of range");
  }
  std::vector<uint32_t> n_head_kv = file.GetU32PerLayer(Key("attention.head_count_kv"), n);
  std::vector<uint32_t> n_ff = file.GetU32PerLayer(Key("feed_forward_length"), n);
  std::vector<bool> sliding = file.GetBoolPerLayer(Key("attention.sliding_window_pattern"), n);
  c.layers.resize(n);
  for (uint32_t l = 0; l < n; ++l) {
    c.layers[l].sliding = sliding[l];
    c.layers[l].n_head_kv = ToInt(n_head_kv[l], src, Key("attention.head_count_kv"));
    c.layers[l].n_ff = ToInt(n_ff[l], src, Key("feed_forward_length"));
  }
  if (const TensorInfo* embd = file.FindTensor("token_embd.weight")) {
    c.n_vocab = static_cast<int>(embd->ne[1]);
  } else if (auto v = file.FindU32(Key("vocab_size"))) {
    c.n_vocab = ToInt(*v, src, Key("vocab_size"));
  } else {
    c.n_vocab = static_cast<int>(file.GetStringArray("tokenizer.ggml.tokens").size());
  }
  c.Derive(src);
  for (const auto& l : c.layers) {
    const int i = static_cast<int>(&l - c.layers.data());
    if (l.owns_kv && !l.sliding) {
      c.full_v_equals_k = file.FindTensor("blk." + std::to_string(i) + ".attn_v.weight") == nullptr;
      break;
    }
  }
  return c;
}

void Gemma4Config::WriteToGguf(GgufWriter& w, std::string_view arch) const {
  auto Key = [arch](const char* suffix) { return std::string(arch) + "." + suffix; };
  w.SetString("general.architecture", arch);
  w.SetU32(Key("context_length"), n_ctx_train);
  w.SetU32(Key("embedding_length"), n_embd);
  w.SetU32(Key("block_count"), n_layer);
  std::vector<int> ff, kv;
  std::vector<bool> swa;
  for (const auto& l : layers) {
    ff.push_back(l.n_ff);
    kv.push_back(l.n_head_kv);
    swa.push_back(l.sliding);
  }
  auto scalar_or_array = [&w](const std::string& key, const std::vector<int>& v) {
    if (AllEqual(v)) {
      w.SetU32(key, v[0]);
    } else {
      std::vector<int32_t> a(v.begin(), v.end());
      w.Set(key, GgufValue::Array(std::span<const int32_t>(a)));
    }
  };
  scalar_or_array(Key("feed_forward_length"), ff);
  w.SetU32(Key("attention.head_count"), n_head);
  scalar_or_array(Key("attention.head_count_kv"), kv);
  w.SetU32(Key("attention.key_length"), head_dim_full);
  w.SetU32(Key("attention.value_length"), head_dim_full);
  w.SetU32(Key("attention.key_length_swa"), head_dim_swa);
  w.SetU32(Key("attention.value_length_swa"), head_dim_swa);
  w.SetF32(Key("attention.layer_norm_rms_epsilon"), rms_eps);
  w.SetU32(Key("attention.sliding_window"), sliding_window);
  w.Set(Key("attention.sliding_window_pattern"), GgufValue::BoolArray(swa));
  w.SetU32(Key("attention.shared_kv_layers"), shared_kv_layers);
  w.SetU32(Key("embedding_length_per_layer_input"), n_embd_per_layer);
  w.SetF32(Key("rope.freq_base"), rope_base_full);
  w.SetF32(Key("rope.freq_base_swa"), rope_base_swa);
  w.SetU32(Key("rope.dimension_count"), n_rot_full);
  w.SetU32(Key("rope.dimension_count_swa"), n_rot_swa);
  if (final_logit_softcap > 0) w.SetF32(Key("final_logit_softcapping"), final_logit_softcap);
  if (n_expert > 0) {
    w.SetU32(Key("expert_count"), n_expert);
    w.SetU32(Key("expert_used_count"), n_expert_used);
    w.SetU32(Key("expert_feed_forward_length"), n_ff_expert);
  }
}

}  // namespace tandem
