// `tandem convert` end to end on synthetic HF checkpoints of every layout: metadata, tensor table
// (against Gemma4TensorList and the config), values bit for bit, output types, the tokenizer
// keys, and identical bytes whatever the sharding, expert spelling or thread count.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/error.h"
#include "convert/hf_config.h"
#include "convert/safetensors_test_util.h"
#include "gguf/gguf_reader.h"
#include "hf_checkpoint.h"
#include "model/gemma4/target.h"
#include "model/gemma4/tensors.h"
#include "tensor/quantize.h"
#include "test_util.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem::testing {
namespace {

// The GGUF tensors a checkpoint of `spec` must give: the model's tensor list plus the assistant's
// extra tensors.
std::map<std::string, std::vector<uint64_t>> ExpectedTable(const HfSpec& spec) {
  const Gemma4Config c = ExpectedConfig(spec);
  std::map<std::string, std::vector<uint64_t>> table;
  for (const Gemma4TensorSpec& s : Gemma4TensorList(c)) table[s.name] = s.ne;
  if (spec.assistant) {
    const uint64_t d = spec.hidden, b = spec.backbone;
    table["nextn.pre_projection.weight"] = {2 * b, d};
    table["nextn.post_projection.weight"] = {d, b};
    table["masked_embd_centroids.weight"] = {d, uint64_t(spec.centroids)};
    table["masked_embd_ordering"] = {uint64_t(spec.vocab)};
  }
  return table;
}

void ExpectConfigEq(const Gemma4Config& got, const Gemma4Config& want) {
  EXPECT_EQ(got.n_vocab, want.n_vocab);
  EXPECT_EQ(got.n_embd, want.n_embd);
  EXPECT_EQ(got.n_layer, want.n_layer);
  EXPECT_EQ(got.n_head, want.n_head);
  EXPECT_EQ(got.n_embd_per_layer, want.n_embd_per_layer);
  EXPECT_EQ(got.sliding_window, want.sliding_window);
  EXPECT_EQ(got.n_ctx_train, want.n_ctx_train);
  EXPECT_EQ(got.shared_kv_layers, want.shared_kv_layers);
  EXPECT_EQ(got.head_dim_full, want.head_dim_full);
  EXPECT_EQ(got.head_dim_swa, want.head_dim_swa);
  EXPECT_EQ(got.n_rot_full, want.n_rot_full);
  EXPECT_EQ(got.n_rot_swa, want.n_rot_swa);
  EXPECT_EQ(got.rope_base_full, 1e6f);
  EXPECT_EQ(got.rope_base_swa, 1e4f);
  EXPECT_EQ(got.rms_eps, 1e-6f);
  EXPECT_EQ(got.final_logit_softcap, want.final_logit_softcap);
  EXPECT_EQ(got.n_expert, want.n_expert);
  EXPECT_EQ(got.n_expert_used, want.n_expert_used);
  EXPECT_EQ(got.n_ff_expert, want.n_ff_expert);
  EXPECT_EQ(got.full_v_equals_k, want.full_v_equals_k);
  ASSERT_EQ(got.layers.size(), want.layers.size());
  for (size_t l = 0; l < want.layers.size(); ++l) {
    EXPECT_EQ(got.layers[l].sliding, want.layers[l].sliding) << l;
    EXPECT_EQ(got.layers[l].n_head_kv, want.layers[l].n_head_kv) << l;
    EXPECT_EQ(got.layers[l].n_ff, want.layers[l].n_ff) << l;
    EXPECT_EQ(got.layers[l].owns_kv, want.layers[l].owns_kv) << l;
    EXPECT_EQ(got.layers[l].kv_source, want.layers[l].kv_source) << l;
  }
}

// Float values of GGUF tensor `t` (F32) starting at element `first`.
const float* F32Data(const GgufFile& f, const TensorInfo& t, uint64_t first = 0) {
  EXPECT_EQ(t.type, TensorType::kF32) << t.name;
  return reinterpret_cast<const float*>(f.TensorData(t)) + first;
}

// Every checkpoint tensor that is written must reappear bit for bit in the f32 GGUF.
void ExpectValuesCopied(const HfCheckpoint& ckpt, const GgufFile& f) {
  for (const HfTensor& t : ckpt.tensors) {
    if (t.gguf.empty()) continue;
    const TensorInfo* info = f.FindTensor(t.gguf);
    ASSERT_NE(info, nullptr) << t.gguf;
    if (!t.ints.empty()) {
      ASSERT_EQ(info->type, TensorType::kI32);
      const auto* ids = reinterpret_cast<const int32_t*>(f.TensorData(*info));
      for (size_t i = 0; i < t.ints.size(); ++i) ASSERT_EQ(ids[i], t.ints[i]) << t.name << " " << i;
      continue;
    }
    if (t.half == 0) {
      ASSERT_EQ(info->n_elements(), t.values.size()) << t.name;
      EXPECT_EQ(std::memcmp(F32Data(f, *info), t.values.data(), t.values.size() * 4), 0) << t.name;
      continue;
    }
    // A gate or up half [E, F, D] of ffn_gate_up_exps {D, 2F, E}.
    const uint64_t e_n = t.shape[0], rows = t.shape[1], d = t.shape[2];
    for (uint64_t e = 0; e < e_n; ++e) {
      const uint64_t first = (e * 2 * rows + (t.half == 2 ? rows : 0)) * d;
      EXPECT_EQ(std::memcmp(F32Data(f, *info, first), t.values.data() + e * rows * d, rows * d * 4),
                0)
          << t.name << " expert " << e;
    }
  }
}

void ExpectVocab(const HfCheckpoint& ckpt, const GgufFile& f) {
  EXPECT_EQ(f.GetString("tokenizer.ggml.model"), "gemma4");
  EXPECT_EQ(f.GetString("tokenizer.chat_template"), kChatTemplate);
  EXPECT_FALSE(f.GetBool("tokenizer.ggml.add_space_prefix"));
  EXPECT_FALSE(f.HasKey("tokenizer.ggml.pre"));  // as llama.cpp's converter
  const Vocab v = VocabFromGgufMetadata(f.metadata());
  ASSERT_EQ(v.tokens, ckpt.vocab.tokens);
  for (size_t i = 0; i < v.tokens.size(); ++i) {
    EXPECT_EQ(static_cast<int>(v.types[i]), ckpt.vocab.types[i]) << v.tokens[i];
  }
  EXPECT_EQ(v.merges, ckpt.vocab.merges);
  EXPECT_EQ(v.bos_id, ckpt.vocab.bos);
  EXPECT_EQ(v.eos_id, ckpt.vocab.eos);
  EXPECT_EQ(v.pad_id, ckpt.vocab.pad);
  EXPECT_EQ(v.unk_id, ckpt.vocab.unk);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_eos);
}

// Converts `spec` (in `n_shards` shards) to f32 and checks everything against the checkpoint.
void CheckF32Conversion(const HfSpec& spec, int n_shards) {
  const HfCheckpoint ckpt = MakeHfCheckpoint(spec);
  const std::string dir = ScratchDir(spec.name);
  WriteHfCheckpoint(ckpt, dir + "/hf", n_shards);
  const std::string out = dir + "/model.gguf";
  const ConvertSummary s = Convert(dir + "/hf", out, TensorType::kF32);
  const std::string arch = spec.assistant ? "gemma4-assistant" : "gemma4";
  EXPECT_EQ(s.gguf_arch, arch);
  EXPECT_EQ(s.hf_architecture, spec.architecture);
  EXPECT_EQ(s.n_shards, static_cast<size_t>(n_shards));
  size_t multimodal = 0;
  for (const HfTensor& t : ckpt.tensors) multimodal += t.multimodal ? 1 : 0;
  EXPECT_EQ(s.n_multimodal, multimodal);
  EXPECT_EQ(multimodal > 0, spec.multimodal);
  size_t dropped = spec.lm_head ? 1 : 0;
  for (const HfTensor& t : ckpt.tensors) {
    const bool text = t.name.rfind(spec.prefix, 0) == 0;
    if (t.gguf.empty() && text && t.name.find("self_attn") != std::string::npos) ++dropped;
  }
  EXPECT_EQ(s.n_dropped, dropped);

  const auto f = GgufFile::Open(out);
  EXPECT_EQ(f->GetString("general.architecture"), arch);
  EXPECT_EQ(f->GetU32("general.file_type"), 0u);
  EXPECT_EQ(f->GetU32("general.quantization_version"), 2u);
  EXPECT_EQ(f->GetString("general.name"), "test");
  ExpectConfigEq(Gemma4Config::FromGguf(*f, arch), ExpectedConfig(spec));
  // llama.cpp writes these as per-layer arrays exactly when the config has the field.
  EXPECT_EQ(f->Find(arch + ".attention.head_count_kv")->is_array(), spec.global_kv_heads > 0);
  EXPECT_EQ(f->Find(arch + ".feed_forward_length")->is_array(), spec.double_wide);
  EXPECT_EQ(f->GetU32(arch + ".embedding_length_per_layer_input"), uint32_t(spec.ple));

  const auto want = ExpectedTable(spec);
  std::map<std::string, std::vector<uint64_t>> got;
  for (const TensorInfo& t : f->tensors()) {
    got[t.name] = {t.ne.begin(), t.ne.begin() + t.n_dims};
    EXPECT_EQ(t.type, t.name == "masked_embd_ordering" ? TensorType::kI32 : TensorType::kF32)
        << t.name;
  }
  EXPECT_EQ(got, want);
  ExpectValuesCopied(ckpt, *f);
  const TensorInfo* rope = f->FindTensor("rope_freqs.weight");
  ASSERT_NE(rope, nullptr);
  for (uint64_t i = 0; i < rope->ne[0]; ++i) {
    EXPECT_EQ(F32Data(*f, *rope)[i], i < 8 ? 1.0f : 1e30f) << i;  // 0.25 * 64 / 2 = 8 pairs
  }
  ExpectVocab(ckpt, *f);
  if (spec.assistant) {
    EXPECT_EQ(f->GetU32(arch + ".embedding_length_out"), uint32_t(spec.backbone));
    EXPECT_EQ(f->GetU32(arch + ".nextn_predict_layers"), uint32_t(spec.layers));
    EXPECT_EQ(f->GetU32(arch + ".num_centroids"), uint32_t(spec.centroids));
    EXPECT_EQ(f->GetU32(arch + ".centroid_intermediate_top_k"), uint32_t(spec.centroid_top_k));
  } else {
    EXPECT_NO_THROW(Gemma4Model::Load(out));
  }
}

TEST(ConvertTest, E2bLikeShardedCheckpoint) {
  CheckF32Conversion(E2bLikeSpec(), 3);
}
TEST(ConvertTest, Moe26bLikeCausalLm) {
  CheckF32Conversion(Moe26bLikeSpec(), 1);
}
TEST(ConvertTest, Dense31bLikeShardedCheckpoint) {
  CheckF32Conversion(Dense31bLikeSpec(), 2);
}
TEST(ConvertTest, AssistantWithCentroids) {
  CheckF32Conversion(AssistantSpec(), 1);
}

TEST(ConvertTest, SplitExpertSpellingIsFusedIntoTheSameTensor) {
  HfSpec split = Moe26bLikeSpec();
  split.split_experts = true;
  CheckF32Conversion(split, 2);
}

TEST(ConvertTest, GenerationConfigSuppressTokensBecomeTheGgufKey) {
  const HfCheckpoint ckpt = MakeHfCheckpoint(Moe26bLikeSpec());
  const std::string dir = ScratchDir("suppress");
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  Convert(dir + "/hf", dir + "/plain.gguf", TensorType::kF32);
  EXPECT_EQ(GgufFile::Open(dir + "/plain.gguf")->Find("tokenizer.ggml.suppress_tokens"), nullptr);
  {
    std::ofstream out(dir + "/hf/generation_config.json");
    out << R"({"do_sample": true, "suppress_tokens": [7, 3, 250]})";
  }
  Convert(dir + "/hf", dir + "/m.gguf", TensorType::kF32);
  const auto f = GgufFile::Open(dir + "/m.gguf");
  EXPECT_EQ(f->GetI32Array("tokenizer.ggml.suppress_tokens"), (std::vector<int32_t>{7, 3, 250}));
  const int n_vocab = static_cast<int>(f->GetStringArray("tokenizer.ggml.tokens").size());
  ASSERT_GT(n_vocab, 250);
  EXPECT_EQ(SuppressTokensFromGguf(f->metadata(), n_vocab), (std::vector<int32_t>{7, 3, 250}));
  EXPECT_THROW(SuppressTokensFromGguf(f->metadata(), 100), Error);  // 250 is outside the vocab
  {
    std::ofstream out(dir + "/hf/generation_config.json");
    out << R"({"suppress_tokens": [1, -4]})";
  }
  EXPECT_THROW(Convert(dir + "/hf", dir + "/bad.gguf", TensorType::kF32), Error);
}

// f16 / bf16 / q8_0: matrices hold exactly the reference encoding of the source values, norms
// and other 1-D tensors and the MoE router stay F32.
void CheckTypedConversion(const HfSpec& spec, TensorType type, uint32_t file_type) {
  const HfCheckpoint ckpt = MakeHfCheckpoint(spec);
  const std::string dir = ScratchDir(spec.name + std::string(TensorTypeName(type)));
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  Convert(dir + "/hf", dir + "/m.gguf", type);
  const auto f = GgufFile::Open(dir + "/m.gguf");
  EXPECT_EQ(f->GetU32("general.file_type"), file_type);
  for (const HfTensor& t : ckpt.tensors) {
    if (t.gguf.empty() || t.half != 0 || !t.ints.empty()) continue;
    const TensorInfo* info = f->FindTensor(t.gguf);
    ASSERT_NE(info, nullptr) << t.gguf;
    const bool keep_f32 =
        t.shape.size() <= 1 || t.gguf.find("ffn_gate_inp.weight") != std::string::npos;
    const TensorType want = keep_f32 ? TensorType::kF32 : type;
    ASSERT_EQ(info->type, want) << t.gguf;
    const uint64_t n = info->ne[0];
    const size_t row_bytes = RowBytes(GetTensorTypeTraits(want), n);
    std::vector<uint8_t> expect(row_bytes);
    for (uint64_t r = 0; r < info->n_elements() / n; ++r) {
      QuantizeRow(want, t.values.data() + r * n, expect.data(), static_cast<int64_t>(n));
      ASSERT_EQ(std::memcmp(f->TensorData(*info) + r * row_bytes, expect.data(), row_bytes), 0)
          << t.gguf << " row " << r;
    }
  }
}

TEST(ConvertTest, F16Bf16AndQ8_0RoundTheSourceValues) {
  CheckTypedConversion(E2bLikeSpec(), TensorType::kF16, 1);
  CheckTypedConversion(E2bLikeSpec(), TensorType::kBF16, 32);
  CheckTypedConversion(Moe26bLikeSpec(), TensorType::kQ8_0, 7);
}

TEST(ConvertTest, ShardingAndThreadCountDoNotChangeTheFile) {
  const HfCheckpoint ckpt = MakeHfCheckpoint(E2bLikeSpec());
  const std::string dir = ScratchDir("e2b");
  WriteHfCheckpoint(ckpt, dir + "/one", 1);
  WriteHfCheckpoint(ckpt, dir + "/four", 4);
  Convert(dir + "/one", dir + "/one.gguf", TensorType::kQ8_0, 1);
  Convert(dir + "/four", dir + "/four.gguf", TensorType::kQ8_0, 2);
  const std::vector<uint8_t> a = ReadAll(dir + "/one.gguf"), b = ReadAll(dir + "/four.gguf");
  EXPECT_GT(a.size(), 100000u);
  EXPECT_TRUE(a == b);
}

TEST(ConvertTest, NamedChatTemplatesFromTokenizerConfig) {
  const HfCheckpoint ckpt = MakeHfCheckpoint(Dense31bLikeSpec());
  const std::string dir = ScratchDir("tok");
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  std::filesystem::remove(dir + "/hf/chat_template.jinja");
  nlohmann::json config = {
      {"add_bos_token", true},
      {"chat_template",
       {{{"name", "default"}, {"template", "A"}}, {{"name", "tool_use"}, {"template", "B"}}}}};
  WriteText(dir + "/hf/tokenizer_config.json", config.dump());
  Convert(dir + "/hf", dir + "/m.gguf", TensorType::kF16);
  const auto f = GgufFile::Open(dir + "/m.gguf");
  EXPECT_EQ(f->GetString("tokenizer.chat_template"), "A");
  EXPECT_EQ(f->GetString("tokenizer.chat_template.tool_use"), "B");
  EXPECT_EQ(f->GetStringArray("tokenizer.chat_templates"),
            std::vector<std::string_view>{"tool_use"});
  EXPECT_EQ(f->GetU32("tokenizer.ggml.bos_token_id"), 2u);
  EXPECT_EQ(f->GetU32("tokenizer.ggml.eos_token_id"), 1u);
}

}  // namespace
}  // namespace tandem::testing
