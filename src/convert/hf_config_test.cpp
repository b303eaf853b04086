// Tests for config.json parsing: architectures, text_config nesting, HF defaults, per-layer
// values (KV heads, double-wide MLP, KV sharing), the assistant and the errors.
#include "convert/hf_config.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace tandem {
namespace {

using Json = nlohmann::json;

Json E2bText() {
  return {{"vocab_size", 512},
          {"hidden_size", 128},
          {"num_hidden_layers", 6},
          {"num_attention_heads", 4},
          {"num_key_value_heads", 1},
          {"head_dim", 32},
          {"global_head_dim", 64},
          {"intermediate_size", 256},
          {"use_double_wide_mlp", true},
          {"hidden_size_per_layer_input", 32},
          {"vocab_size_per_layer_input", 512},
          {"num_kv_shared_layers", 3},
          {"sliding_window", 32},
          {"max_position_embeddings", 4096},
          {"final_logit_softcapping", 30.0},
          {"layer_types",
           {"sliding_attention", "sliding_attention", "full_attention", "sliding_attention",
            "sliding_attention", "full_attention"}},
          {"rope_parameters",
           {{"sliding_attention", {{"rope_type", "default"}, {"rope_theta", 10000.0}}},
            {"full_attention",
             {{"rope_type", "proportional"},
              {"partial_rotary_factor", 0.25},
              {"rope_theta", 1000000.0}}}}},
          {"bos_token_id", 2},
          {"eos_token_id", {1, 106}},
          {"pad_token_id", 0}};
}

HfModelConfig Parse(const Json& j) {
  return ParseHfConfig(j.dump(), "config.json");
}

void ExpectError(const Json& j, ErrorKind kind, const std::string& needle) {
  try {
    Parse(j);
    ADD_FAILURE() << "no error; expected '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("config.json", 0), 0u) << e.what();
  }
}

TEST(HfConfigTest, ConditionalGenerationWithTextConfig) {
  const HfModelConfig hf =
      Parse({{"architectures", {"Gemma4ForConditionalGeneration"}}, {"text_config", E2bText()}});
  EXPECT_EQ(hf.kind, HfModelKind::kTarget);
  EXPECT_EQ(hf.gguf_arch, "gemma4");
  const Gemma4Config& c = hf.config;
  EXPECT_EQ(c.n_vocab, 512);
  EXPECT_EQ(c.n_embd, 128);
  EXPECT_EQ(c.n_layer, 6);
  EXPECT_EQ(c.n_embd_per_layer, 32);
  EXPECT_TRUE(hf.ple_width_given);
  EXPECT_EQ(c.shared_kv_layers, 3);
  EXPECT_EQ(c.head_dim_swa, 32);
  EXPECT_EQ(c.head_dim_full, 64);
  EXPECT_EQ(c.n_rot_full, 64);
  EXPECT_EQ(c.n_rot_swa, 32);
  EXPECT_EQ(c.rope_base_full, 1e6f);
  EXPECT_EQ(c.rope_base_swa, 1e4f);
  EXPECT_FLOAT_EQ(hf.rope_partial_factor_full, 0.25f);
  EXPECT_EQ(c.final_logit_softcap, 30.0f);
  EXPECT_FALSE(c.full_v_equals_k);
  const std::vector<bool> sliding = {true, true, false, true, true, false};
  for (int l = 0; l < 6; ++l) {
    EXPECT_EQ(c.layers[l].sliding, sliding[l]) << l;
    EXPECT_EQ(c.layers[l].n_ff, l < 3 ? 256 : 512) << l;  // double-wide on KV-shared layers
    EXPECT_EQ(c.layers[l].n_head_kv, 1);
    EXPECT_EQ(c.layers[l].owns_kv, l < 3) << l;
  }
  EXPECT_TRUE(hf.feed_forward_length_as_array);
  EXPECT_FALSE(hf.head_count_kv_as_array);
  EXPECT_EQ(hf.bos_token_id, 2);
  EXPECT_EQ(hf.eos_token_id, 1);  // first of the list
  EXPECT_EQ(hf.pad_token_id, 0);
}

TEST(HfConfigTest, CausalLmAtTopLevelWithMoeAndGlobalKvHeads) {
  Json j = E2bText();
  j["architectures"] = {"Gemma4ForCausalLM"};
  j.erase("hidden_size_per_layer_input");
  j["num_kv_shared_layers"] = 0;
  j["use_double_wide_mlp"] = false;
  j["num_key_value_heads"] = 4;
  j["num_attention_heads"] = 8;
  j["num_global_key_value_heads"] = 2;
  j["attention_k_eq_v"] = true;
  j["enable_moe_block"] = true;
  j["num_experts"] = 4;
  j["top_k_experts"] = 2;
  j["moe_intermediate_size"] = 64;
  const HfModelConfig hf = Parse(j);
  const Gemma4Config& c = hf.config;
  EXPECT_FALSE(hf.ple_width_given);  // absent: the converter infers it from the tensors
  EXPECT_EQ(c.n_expert, 4);
  EXPECT_EQ(c.n_expert_used, 2);
  EXPECT_EQ(c.n_ff_expert, 64);
  EXPECT_TRUE(c.full_v_equals_k);
  EXPECT_TRUE(hf.head_count_kv_as_array);
  for (int l = 0; l < 6; ++l) EXPECT_EQ(c.layers[l].n_head_kv, c.layers[l].sliding ? 4 : 2);
  // Without attention_k_eq_v HF keeps num_key_value_heads on full layers.
  j["attention_k_eq_v"] = false;
  for (const auto& l : Parse(j).config.layers) EXPECT_EQ(l.n_head_kv, 4);
}

TEST(HfConfigTest, AppliesHfDefaults) {
  const Json j = {{"architectures", {"Gemma4ForCausalLM"}},
                  {"hidden_size", 64},
                  {"num_hidden_layers", 7},
                  {"num_attention_heads", 8},
                  {"intermediate_size", 128}};
  const HfModelConfig hf = Parse(j);
  const Gemma4Config& c = hf.config;
  EXPECT_EQ(c.n_vocab, 262144);
  EXPECT_EQ(c.head_dim_swa, 256);
  EXPECT_EQ(c.head_dim_full, 512);
  EXPECT_EQ(c.sliding_window, 512);
  EXPECT_EQ(c.n_ctx_train, 131072);
  EXPECT_EQ(c.layers[0].n_head_kv, 4);
  // Default pattern: every sixth layer full, and the last layer is always full.
  for (int l = 0; l < 7; ++l) EXPECT_EQ(c.layers[l].sliding, l != 5 && l != 6) << l;
  EXPECT_FLOAT_EQ(hf.rope_partial_factor_full, 0.25f);
  EXPECT_EQ(c.final_logit_softcap, 0.0f);
}

TEST(HfConfigTest, AssistantWithCentroids) {
  Json text = E2bText();
  text["hidden_size"] = 64;
  text["num_hidden_layers"] = 4;
  text["num_attention_heads"] = 2;
  text["intermediate_size"] = 128;
  text["hidden_size_per_layer_input"] = 0;
  text["use_double_wide_mlp"] = false;
  text["num_kv_shared_layers"] = 4;
  text["layer_types"] = {"sliding_attention", "sliding_attention", "sliding_attention",
                         "full_attention"};
  for (const char* arch : {"Gemma4AssistantForCausalLM", "Gemma4UnifiedAssistantForCausalLM"}) {
    const Json j = {{"architectures", {arch}},     {"text_config", text},
                    {"backbone_hidden_size", 128}, {"use_ordered_embeddings", true},
                    {"num_centroids", 8},          {"centroid_intermediate_top_k", 2}};
    const HfModelConfig hf = Parse(j);
    EXPECT_EQ(hf.kind, HfModelKind::kAssistant);
    EXPECT_EQ(hf.gguf_arch, "gemma4-assistant");
    EXPECT_TRUE(hf.config.q_only);
    EXPECT_EQ(hf.config.shared_kv_layers, 4);
    EXPECT_EQ(hf.backbone_hidden_size, 128);
    EXPECT_TRUE(hf.use_ordered_embeddings);
    EXPECT_EQ(hf.num_centroids, 8);
    EXPECT_EQ(hf.centroid_top_k, 2);
    for (const auto& l : hf.config.layers) EXPECT_FALSE(l.owns_kv);
  }
  Json bad = {{"architectures", {"Gemma4AssistantForCausalLM"}},
              {"text_config", text},
              {"use_ordered_embeddings", true},
              {"num_centroids", 7}};
  ExpectError(bad, ErrorKind::kCorrupt, "num_centroids");
}

TEST(HfConfigTest, RejectsUnknownArchitecturesAndFeatures) {
  ExpectError({{"architectures", {"LlamaForCausalLM"}}}, ErrorKind::kUnsupported,
              "unknown architecture 'LlamaForCausalLM'");
  ExpectError({{"model_type", "gemma4"}}, ErrorKind::kUnsupported, "no 'architectures'");
  ExpectError({{"architectures", {"Gemma4ForConditionalGeneration"}}}, ErrorKind::kCorrupt,
              "text_config");
  Json j = E2bText();
  j["architectures"] = {"Gemma4ForCausalLM"};
  Json act = j;
  act["hidden_activation"] = "silu";
  ExpectError(act, ErrorKind::kUnsupported, "hidden_activation");
  Json cap = j;
  cap["attn_logit_softcapping"] = 50.0;
  ExpectError(cap, ErrorKind::kUnsupported, "attn_logit_softcapping");
  Json rope = j;
  rope["rope_parameters"]["full_attention"]["rope_type"] = "yarn";
  ExpectError(rope, ErrorKind::kUnsupported, "rope_type 'yarn'");
  Json types = j;
  types["layer_types"][1] = "chunked_attention";
  ExpectError(types, ErrorKind::kCorrupt, "layer_types[1]");
  Json count = j;
  count["layer_types"].erase(0);
  ExpectError(count, ErrorKind::kCorrupt, "layer_types");
  Json wrong = j;
  wrong["hidden_size"] = "128";
  ExpectError(wrong, ErrorKind::kCorrupt, "hidden_size must be an integer");
  Json missing = j;
  missing.erase("num_hidden_layers");
  ExpectError(missing, ErrorKind::kCorrupt, "num_hidden_layers is missing");
  ExpectError(Json::array(), ErrorKind::kCorrupt, "not a JSON object");
  try {
    ParseHfConfig("{\"architectures\": [", "config.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
  }
}

}  // namespace
}  // namespace tandem
