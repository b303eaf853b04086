#include "hf_checkpoint.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "convert/safetensors_test_util.h"
#include "hf_tensor_builder.h"

namespace tandem::testing {
namespace {

using Json = nlohmann::json;
using namespace hf_build;

std::vector<bool> Pattern(std::initializer_list<int> full_layers, int n) {
  std::vector<bool> s(n, true);
  for (int l : full_layers) s[l] = false;
  return s;
}

void AddLayers(const HfSpec& s, Builder& b) {
  const uint64_t d = s.hidden, p = s.ple;
  for (int l = 0; l < s.layers; ++l) {
    const std::string hf = s.prefix + "layers." + std::to_string(l) + ".";
    const std::string blk = "blk." + std::to_string(l) + ".";
    const bool swa = s.sliding[l];
    const uint64_t hd = swa ? s.head_dim : s.global_head_dim;
    const uint64_t kvh =
        (!swa && s.k_eq_v && s.global_kv_heads > 0) ? s.global_kv_heads : s.kv_heads;
    const bool owns = s.assistant ? false : l < s.layers - s.kv_shared;
    const uint64_t ff =
        (s.double_wide && s.kv_shared > 0 && l >= s.layers - s.kv_shared) ? 2 * s.ff : s.ff;
    b.Add(hf + "input_layernorm.weight", blk + "attn_norm.weight", {d}, Kind::kNorm);
    b.Add(hf + "self_attn.q_proj.weight", blk + "attn_q.weight", {s.heads * hd, d}, Kind::kMatrix);
    b.Add(hf + "self_attn.q_norm.weight", blk + "attn_q_norm.weight", {hd}, Kind::kQkNorm);
    if (owns || s.shared_kv_tensors) {
      const std::string g = owns ? blk : "";  // K/V of shared layers are dropped
      b.Add(hf + "self_attn.k_proj.weight", owns ? blk + "attn_k.weight" : g, {kvh * hd, d},
            Kind::kMatrix);
      b.Add(hf + "self_attn.k_norm.weight", owns ? blk + "attn_k_norm.weight" : g, {hd},
            Kind::kQkNorm);
      if (swa || !s.k_eq_v) {
        b.Add(hf + "self_attn.v_proj.weight", owns ? blk + "attn_v.weight" : g, {kvh * hd, d},
              Kind::kMatrix);
      }
    }
    b.Add(hf + "self_attn.o_proj.weight", blk + "attn_output.weight", {d, s.heads * hd},
          Kind::kMatrix);
    b.Add(hf + "post_attention_layernorm.weight", blk + "post_attention_norm.weight", {d},
          Kind::kNorm);
    b.Add(hf + "pre_feedforward_layernorm.weight", blk + "ffn_norm.weight", {d}, Kind::kNorm);
    b.Add(hf + "mlp.gate_proj.weight", blk + "ffn_gate.weight", {ff, d}, Kind::kMatrix);
    b.Add(hf + "mlp.up_proj.weight", blk + "ffn_up.weight", {ff, d}, Kind::kMatrix);
    b.Add(hf + "mlp.down_proj.weight", blk + "ffn_down.weight", {d, ff}, Kind::kMatrix);
    b.Add(hf + "post_feedforward_layernorm.weight", blk + "post_ffw_norm.weight", {d}, Kind::kNorm);
    b.Add(hf + "layer_scalar", blk + "layer_output_scale.weight", {1}, Kind::kScale);
    if (p > 0) {
      b.Add(hf + "per_layer_input_gate.weight", blk + "inp_gate.weight", {p, d}, Kind::kMatrix);
      b.Add(hf + "per_layer_projection.weight", blk + "proj.weight", {d, p}, Kind::kMatrix);
      b.Add(hf + "post_per_layer_input_norm.weight", blk + "post_norm.weight", {d}, Kind::kNorm);
    }
    if (s.experts > 0) {
      const uint64_t e = s.experts, f = s.moe_ff;
      b.Add(hf + "router.proj.weight", blk + "ffn_gate_inp.weight", {e, d}, Kind::kMatrix);
      b.Add(hf + "router.scale", blk + "ffn_gate_inp.scale", {d}, Kind::kNorm);
      b.Add(hf + "pre_feedforward_layernorm_2.weight", blk + "pre_ffw_norm_2.weight", {d},
            Kind::kNorm);
      b.Add(hf + "post_feedforward_layernorm_1.weight", blk + "post_ffw_norm_1.weight", {d},
            Kind::kNorm);
      b.Add(hf + "post_feedforward_layernorm_2.weight", blk + "post_ffw_norm_2.weight", {d},
            Kind::kNorm);
      if (s.split_experts) {
        b.Add(hf + "moe.gate_proj", blk + "ffn_gate_up_exps.weight", {e, f, d}, Kind::kMatrix, 1);
        b.Add(hf + "moe.up_proj", blk + "ffn_gate_up_exps.weight", {e, f, d}, Kind::kMatrix, 2);
        b.Add(hf + "moe.down_proj", blk + "ffn_down_exps.weight", {e, d, f}, Kind::kMatrix);
        b.Add(hf + "moe.per_expert_scale", blk + "ffn_down_exps.scale", {e}, Kind::kScale);
      } else {
        b.Add(hf + "experts.gate_up_proj", blk + "ffn_gate_up_exps.weight", {e, 2 * f, d},
              Kind::kMatrix);
        b.Add(hf + "experts.down_proj", blk + "ffn_down_exps.weight", {e, d, f}, Kind::kMatrix);
        b.Add(hf + "router.per_expert_scale", blk + "ffn_down_exps.scale", {e}, Kind::kScale);
      }
    }
  }
}

Json TextConfig(const HfSpec& s) {
  Json layer_types = Json::array();
  for (bool swa : s.sliding) layer_types.push_back(swa ? "sliding_attention" : "full_attention");
  Json c = {
      {"model_type", "gemma4_text"},
      {"vocab_size", s.vocab},
      {"hidden_size", s.hidden},
      {"num_hidden_layers", s.layers},
      {"num_attention_heads", s.heads},
      {"num_key_value_heads", s.kv_heads},
      {"num_global_key_value_heads", s.global_kv_heads > 0 ? Json(s.global_kv_heads) : Json()},
      {"head_dim", s.head_dim},
      {"global_head_dim", s.global_head_dim},
      {"intermediate_size", s.ff},
      {"use_double_wide_mlp", s.double_wide},
      {"attention_k_eq_v", s.k_eq_v},
      {"num_kv_shared_layers", s.assistant ? s.layers : s.kv_shared},
      {"vocab_size_per_layer_input", s.vocab},
      {"sliding_window", s.window},
      {"max_position_embeddings", 4096},
      {"rms_norm_eps", 1e-6},
      {"hidden_activation", "gelu_pytorch_tanh"},
      {"final_logit_softcapping", s.softcap > 0 ? Json(s.softcap) : Json()},
      {"layer_types", layer_types},
      {"rope_parameters",
       {{"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
        {"full_attention",
         {{"rope_type", "proportional"}, {"partial_rotary_factor", 0.25}, {"rope_theta", 1e6}}}}},
      {"tie_word_embeddings", true},
      {"bos_token_id", 2},
      {"eos_token_id", 1},
      {"pad_token_id", 0},
  };
  if (s.ple_in_config) c["hidden_size_per_layer_input"] = s.ple;
  if (s.experts > 0) {
    c["enable_moe_block"] = true;
    c["num_experts"] = s.experts;
    c["top_k_experts"] = s.top_k;
    c["moe_intermediate_size"] = s.moe_ff;
  }
  return c;
}

}  // namespace

HfSpec E2bLikeSpec() {
  HfSpec s;
  s.name = "e2b";
  s.architecture = "Gemma4ForConditionalGeneration";
  s.prefix = "model.language_model.";
  s.dtype = "BF16";
  s.ple = 32;
  s.kv_shared = 3;
  s.double_wide = true;
  s.sliding = Pattern({2, 5}, 6);
  s.shared_kv_tensors = true;
  s.multimodal = true;
  s.seed = 11;
  return s;
}

HfSpec Moe26bLikeSpec() {
  HfSpec s;
  s.name = "26b";
  s.architecture = "Gemma4ForCausalLM";
  s.prefix = "model.";
  s.dtype = "F32";
  s.heads = 8;
  s.kv_heads = 4;
  s.global_kv_heads = 2;
  s.k_eq_v = true;
  s.ff = 96;
  s.experts = 4;
  s.top_k = 2;
  s.moe_ff = 64;
  s.ple_in_config = false;
  s.sliding = Pattern({2, 5}, 6);
  s.lm_head = true;
  s.seed = 26;
  return s;
}

HfSpec Dense31bLikeSpec() {
  HfSpec s;
  s.name = "31b";
  s.architecture = "Gemma4ForConditionalGeneration";
  s.prefix = "model.language_model.";
  s.dtype = "F16";
  s.hidden = 256;
  s.heads = 8;
  s.kv_heads = 4;
  s.global_kv_heads = 2;
  s.k_eq_v = true;
  s.ff = 512;
  s.sliding = Pattern({5}, 6);
  s.lm_head = true;
  s.seed = 31;
  return s;
}

HfSpec AssistantSpec() {
  HfSpec s;
  s.name = "assistant";
  s.architecture = "Gemma4AssistantForCausalLM";
  s.prefix = "model.";
  s.dtype = "BF16";
  s.hidden = 64;
  s.layers = 4;
  s.heads = 2;
  s.ff = 128;
  s.sliding = Pattern({3}, 4);
  s.softcap = 0;
  s.assistant = true;
  s.backbone = 128;
  s.centroids = 8;
  s.centroid_top_k = 2;
  s.seed = 77;
  return s;
}

HfCheckpoint MakeHfCheckpoint(const HfSpec& s) {
  HfCheckpoint c;
  c.spec = s;
  c.vocab = MakeSyntheticVocab(s.vocab);
  Builder b(s);
  const uint64_t v = s.vocab, d = s.hidden, lp = uint64_t(s.layers) * s.ple;
  b.Add(s.prefix + "embed_tokens.weight", "token_embd.weight", {v, d}, Kind::kMatrix);
  b.Add(s.prefix + "norm.weight", "output_norm.weight", {d}, Kind::kNorm);
  if (s.ple > 0) {
    b.Add(s.prefix + "embed_tokens_per_layer.weight", "per_layer_token_embd.weight", {v, lp},
          Kind::kMatrix);
    b.Add(s.prefix + "per_layer_model_projection.weight", "per_layer_model_proj.weight", {lp, d},
          Kind::kMatrix);
    b.Add(s.prefix + "per_layer_projection_norm.weight", "per_layer_proj_norm.weight",
          {uint64_t(s.ple)}, Kind::kNorm);
  }
  AddLayers(s, b);
  if (s.lm_head) b.Add("lm_head.weight", "", {v, d}, Kind::kMatrix);
  if (s.multimodal) AddVisionTower(s, b);
  if (s.multimodal && s.audio.present) AddAudioTower(s, b);
  Json config = TextConfig(s);
  if (s.assistant) {
    const uint64_t bb = s.backbone;
    b.Add("pre_projection.weight", "nextn.pre_projection.weight", {d, 2 * bb}, Kind::kMatrix);
    b.Add("post_projection.weight", "nextn.post_projection.weight", {bb, d}, Kind::kMatrix);
    b.Add("masked_embedding.centroids.weight", "masked_embd_centroids.weight",
          {uint64_t(s.centroids), d}, Kind::kMatrix);
    std::vector<int64_t> ordering(s.vocab);
    for (int i = 0; i < s.vocab; ++i) ordering[i] = i;
    uint64_t state = Mix(s.seed);
    for (int i = s.vocab - 1; i > 0; --i) {
      state = Mix(state);
      std::swap(ordering[i], ordering[state % (i + 1)]);
    }
    b.AddInts("masked_embedding.token_ordering", "masked_embd_ordering", ordering);
    config = {{"architectures", {s.architecture}},
              {"model_type", "gemma4_assistant"},
              {"text_config", config},
              {"backbone_hidden_size", s.backbone},
              {"use_ordered_embeddings", true},
              {"num_centroids", s.centroids},
              {"centroid_intermediate_top_k", s.centroid_top_k},
              {"tie_word_embeddings", true}};
  } else if (s.architecture == "Gemma4ForConditionalGeneration") {
    config = {{"architectures", {s.architecture}},
              {"model_type", "gemma4"},
              {"text_config", config},
              {"vision_config", s.multimodal ? VisionConfig(s.vision) : Json()},
              {"audio_config", s.multimodal && s.audio.present ? AudioConfig(s.audio) : Json()}};
  } else {
    config["architectures"] = {s.architecture};
  }
  c.config = config;
  c.tensors = b.Take();
  return c;
}

std::string TokenizerJsonText(const SyntheticVocab& v) {
  Json vocab = Json::object();
  Json added = Json::array();
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    const int type = v.types[id];
    if (type == 3 || type == 2 || type == 4) {
      added.push_back({{"id", id},
                       {"content", v.tokens[id]},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", type != 4}});
    } else {
      vocab[v.tokens[id]] = id;
    }
  }
  Json merges = Json::array();
  for (size_t i = 0; i < v.merges.size(); ++i) {
    const std::string& m = v.merges[i];
    const size_t sp = m.find(' ', 1);
    // Half of them as "left right" strings, half as [left, right] pairs (both HF formats).
    if (i % 2 == 0) {
      merges.push_back(m);
    } else {
      merges.push_back({m.substr(0, sp), m.substr(sp + 1)});
    }
  }
  Json single = Json::array();
  single.push_back({{"SpecialToken", {{"id", "<bos>"}, {"type_id", 0}}}});
  single.push_back({{"Sequence", {{"id", "A"}, {"type_id", 0}}}});
  const Json root = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer",
       {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}},
      {"pre_tokenizer",
       {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}}},
      {"post_processor", {{"type", "TemplateProcessing"}, {"single", single}}},
      {"decoder", nullptr},
      {"model",
       {{"type", "BPE"},
        {"vocab", vocab},
        {"merges", merges},
        {"byte_fallback", true},
        {"unk_token", "<unk>"},
        {"fuse_unk", true}}},
  };
  return root.dump();
}

void WriteHfCheckpoint(const HfCheckpoint& c, const std::string& dir, int n_shards) {
  namespace fs = std::filesystem;
  fs::remove_all(dir);
  fs::create_directories(dir);
  WriteText(dir + "/config.json", c.config.dump(2));
  WriteText(dir + "/tokenizer.json", TokenizerJsonText(c.vocab));
  WriteText(dir + "/tokenizer_config.json", Json{{"bos_token", "<bos>"},
                                                 {"eos_token", "<eos>"},
                                                 {"pad_token", "<pad>"},
                                                 {"unk_token", "<unk>"},
                                                 {"add_bos_token", true},
                                                 {"add_eos_token", false}}
                                                .dump());
  WriteText(dir + "/chat_template.jinja", kChatTemplate);
  std::vector<std::vector<StTensor>> shards(n_shards);
  Json weight_map = Json::object();
  for (size_t i = 0; i < c.tensors.size(); ++i) {
    const HfTensor& t = c.tensors[i];
    StTensor st{t.name, t.dtype, t.shape,
                t.dtype == "I64" ? RawBytes(t.ints) : FloatBytes(t.values, t.dtype)};
    shards[i % n_shards].push_back(std::move(st));
  }
  if (n_shards == 1) {
    WriteBytes(dir + "/model.safetensors", SafetensorsBytes(shards[0]));
    return;
  }
  uint64_t total = 0;
  for (int k = 0; k < n_shards; ++k) {
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", k + 1, n_shards);
    WriteBytes(dir + "/" + name,
               SafetensorsBytes(shards[k], SafetensorsHeader(shards[k], {{"format", "pt"}})));
    for (const StTensor& t : shards[k]) {
      weight_map[t.name] = name;
      total += t.bytes.size();
    }
  }
  WriteText(dir + "/model.safetensors.index.json",
            Json{{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}}.dump(2));
}

Gemma4Config ExpectedConfig(const HfSpec& s) {
  Gemma4Config c;
  c.n_vocab = s.vocab;
  c.n_embd = s.hidden;
  c.n_layer = s.layers;
  c.n_head = s.heads;
  c.n_embd_per_layer = s.ple;
  c.sliding_window = s.window;
  c.n_ctx_train = 4096;
  c.shared_kv_layers = s.assistant ? s.layers : s.kv_shared;
  c.head_dim_full = s.global_head_dim;
  c.head_dim_swa = s.head_dim;
  c.n_rot_full = s.global_head_dim;
  c.n_rot_swa = s.head_dim;
  c.final_logit_softcap = s.softcap;
  c.n_expert = s.experts;
  c.n_expert_used = s.top_k;
  c.n_ff_expert = s.moe_ff;
  c.full_v_equals_k = s.k_eq_v;
  c.q_only = s.assistant;
  c.layers.resize(s.layers);
  for (int l = 0; l < s.layers; ++l) {
    c.layers[l].sliding = s.sliding[l];
    c.layers[l].n_head_kv =
        (!s.sliding[l] && s.k_eq_v && s.global_kv_heads > 0) ? s.global_kv_heads : s.kv_heads;
    c.layers[l].n_ff =
        (s.double_wide && s.kv_shared > 0 && l >= s.layers - s.kv_shared) ? 2 * s.ff : s.ff;
  }
  c.Derive("expected " + s.name);
  return c;
}

}  // namespace tandem::testing
