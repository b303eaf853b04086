// Tests for the GGUF tokenizer keys: write/read round trip, accepted spellings, errors, and the
// llama.cpp tiny fixture's vocabulary against llama.cpp's own token ids and text.
#include "tokenizer/vocab_gguf.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "tokenizer/test_vocab.h"
#include "tokenizer/tokenizer.h"

namespace tandem {
namespace {

using testing::IdOf;
using testing::MakeVocab;

const std::string kSp = "\xE2\x96\x81";
const std::string kFixtureDir = std::string(TANDEM_SHARED_DIR) + "/fixtures/llamacpp-tiny";

Vocab SampleVocab() {
  Vocab v = MakeVocab({{"a", TokenType::kNormal},
                       {kSp, TokenType::kNormal},
                       {kSp + "a", TokenType::kNormal},
                       {"<|channel>", TokenType::kUserDefined},
                       {"[PAD300]", TokenType::kUnused}},
                      {kSp + " a"});
  v.scores.assign(v.size(), -1000.0f);
  v.eot_id = IdOf(v, "<|channel>");
  return v;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tandem_vocab_gguf_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(VocabGgufTest, WriteThenLoadGivesTheSameVocabulary) {
  const Vocab v = SampleVocab();
  GgufWriter writer;
  writer.SetString("general.architecture", "gemma4");
  AddVocabToGguf(v, writer);
  const std::string path = TempPath("roundtrip.gguf");
  writer.Write(path);
  const auto file = GgufFile::Open(path);
  EXPECT_TRUE(file->tensors().empty());  // vocab-only file
  EXPECT_EQ(file->GetString("tokenizer.ggml.model"), "gemma4");
  EXPECT_EQ(file->GetU32("tokenizer.ggml.bos_token_id"), 2u);
  EXPECT_FALSE(file->GetBool("tokenizer.ggml.add_space_prefix"));
  const Vocab back = LoadVocabFromGguf(*file);
  std::filesystem::remove(path);
  EXPECT_EQ(back.source, path);
  EXPECT_EQ(back.tokens, v.tokens);
  EXPECT_EQ(back.types, v.types);
  EXPECT_EQ(back.scores, v.scores);
  EXPECT_EQ(back.merges, v.merges);
  EXPECT_EQ(back.bos_id, v.bos_id);
  EXPECT_EQ(back.eos_id, v.eos_id);
  EXPECT_EQ(back.eot_id, v.eot_id);
  EXPECT_EQ(back.unk_id, v.unk_id);
  EXPECT_EQ(back.pad_id, v.pad_id);
  EXPECT_EQ(back.mask_id, kNoToken);
  EXPECT_TRUE(back.add_bos);
  EXPECT_FALSE(back.add_eos);
  const Tokenizer t(back);
  EXPECT_EQ(t.Encode(" a<|channel>"),
            (std::vector<int32_t>{2, IdOf(v, kSp + "a"), IdOf(v, "<|channel>")}));
}

GgufMetadata SampleMetadata() {
  GgufMetadata md("sample.gguf");
  AddVocabToGgufMetadata(SampleVocab(), md);
  return md;
}

void ExpectError(const GgufMetadata& md, ErrorKind kind, const std::string& needle) {
  try {
    VocabFromGgufMetadata(md);
    ADD_FAILURE() << "no error; wanted " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sample.gguf"), std::string::npos) << e.what();
  }
}

TEST(VocabGgufTest, AcceptsOllamaSpelling) {
  GgufMetadata md = SampleMetadata();
  md.Set("tokenizer.ggml.model", GgufValue::String("llama"));
  md.Set("tokenizer.ggml.pre", GgufValue::String("gemma4"));
  EXPECT_EQ(VocabFromGgufMetadata(md).merges.size(), 1u);
  md.Remove("tokenizer.ggml.merges");  // SentencePiece "llama" without merges is not Gemma 4
  ExpectError(md, ErrorKind::kUnsupported, "tokenizer.ggml.model");
}

TEST(VocabGgufTest, RejectsOtherTokenizerModels) {
  GgufMetadata gpt2 = SampleMetadata();
  gpt2.Set("tokenizer.ggml.model", GgufValue::String("gpt2"));
  ExpectError(gpt2, ErrorKind::kUnsupported, "'gpt2'");
  GgufMetadata llama = SampleMetadata();
  llama.Set("tokenizer.ggml.model", GgufValue::String("llama"));
  llama.Set("tokenizer.ggml.pre", GgufValue::String("default"));
  ExpectError(llama, ErrorKind::kUnsupported, "'llama'");
}

TEST(VocabGgufTest, ForcesBosAndDropsOutOfRangeIds) {
  GgufMetadata md = SampleMetadata();
  md.Set("tokenizer.ggml.add_bos_token", GgufValue::Bool(false));
  md.Set("tokenizer.ggml.eos_token_id", GgufValue::U32(1u << 20));
  md.Set("tokenizer.ggml.padding_token_id", GgufValue::I32(0));  // any integer type is read
  md.Remove("tokenizer.ggml.scores");
  const Vocab v = VocabFromGgufMetadata(md);
  EXPECT_TRUE(v.add_bos);
  EXPECT_EQ(v.eos_id, kNoToken);
  EXPECT_EQ(v.pad_id, 0);
  EXPECT_TRUE(v.scores.empty());
}

TEST(VocabGgufTest, MalformedKeysAreReported) {
  GgufMetadata no_tokens = SampleMetadata();
  no_tokens.Remove("tokenizer.ggml.tokens");
  ExpectError(no_tokens, ErrorKind::kNotFound, "tokenizer.ggml.tokens");
  GgufMetadata no_model = SampleMetadata();
  no_model.Remove("tokenizer.ggml.model");
  ExpectError(no_model, ErrorKind::kNotFound, "tokenizer.ggml.model");
  GgufMetadata short_types = SampleMetadata();
  short_types.Set("tokenizer.ggml.token_type", GgufValue::Array<int32_t>(std::vector<int32_t>{1}));
  ExpectError(short_types, ErrorKind::kCorrupt, "tokenizer.ggml.token_type");
  GgufMetadata bad_type = SampleMetadata();
  std::vector<int32_t> types(SampleVocab().size(), 1);
  types[7] = 42;
  bad_type.Set("tokenizer.ggml.token_type", GgufValue::Array<int32_t>(types));
  ExpectError(bad_type, ErrorKind::kCorrupt, "unknown type 42");
  GgufMetadata string_id = SampleMetadata();
  string_id.Set("tokenizer.ggml.bos_token_id", GgufValue::String("2"));
  ExpectError(string_id, ErrorKind::kCorrupt, "tokenizer.ggml.bos_token_id");
  GgufMetadata wrong_tokens = SampleMetadata();
  wrong_tokens.Set("tokenizer.ggml.tokens", GgufValue::U32(3));
  try {
    VocabFromGgufMetadata(wrong_tokens);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.tokens"), std::string::npos);
  }
}

std::unique_ptr<GgufFile> OpenFixtureOrNull() {
  const std::string path = kFixtureDir + "/tiny-gemma4-f32.gguf";
  if (!std::filesystem::exists(path)) return nullptr;
  return GgufFile::Open(path);
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

TEST(VocabGgufTest, TinyFixturePromptsMatchLlamaTokenize) {
  const auto file = OpenFixtureOrNull();
  if (!file) GTEST_SKIP() << "llama.cpp fixture absent: " << kFixtureDir;
  const Tokenizer t(LoadVocabFromGguf(*file));
  EXPECT_EQ(t.n_tokens(), 512);
  const nlohmann::json prompts = ReadJson(kFixtureDir + "/prompts.json");
  ASSERT_EQ(prompts["prompts"].size(), 4u);
  for (const auto& p : prompts["prompts"]) {
    const std::string text = p["text"];
    EXPECT_EQ(t.Encode(text), p["token_ids"].get<std::vector<int32_t>>()) << text;
    std::vector<int32_t> ids = p["token_ids"];
    ids.erase(ids.begin());  // BOS
    EXPECT_EQ(t.Decode(ids), text);
  }
}

TEST(VocabGgufTest, TinyFixtureGenerationsDecodeAsLlamaServer) {
  const auto file = OpenFixtureOrNull();
  if (!file) GTEST_SKIP() << "llama.cpp fixture absent: " << kFixtureDir;
  const Tokenizer t(LoadVocabFromGguf(*file));
  EXPECT_TRUE(t.IsEog(1));  // <eos>
  EXPECT_TRUE(t.IsEog(6));  // <turn|>
  EXPECT_FALSE(t.IsEog(2));
  const nlohmann::json runs = ReadJson(kFixtureDir + "/greedy-nospec.json");
  ASSERT_EQ(runs["results"].size(), 4u);
  for (const auto& r : runs["results"]) {
    const std::vector<int32_t> ids = r["token_ids"];
    EXPECT_EQ(t.Decode(ids), r["text"].get<std::string>());
    EXPECT_EQ(t.Decode(ids, /*render_special=*/true), r["text_with_special"].get<std::string>());
    const std::vector<std::string> pieces = r["pieces"];
    ASSERT_EQ(pieces.size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) {
      EXPECT_EQ(t.TokenToPiece(ids[i], /*render_special=*/true), pieces[i]) << "token " << ids[i];
    }
  }
}

}  // namespace
}  // namespace tandem
