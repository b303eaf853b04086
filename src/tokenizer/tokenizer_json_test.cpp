// Tests for reading a Hugging Face tokenizer.json into a Vocab.
#include "tokenizer/tokenizer_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "tokenizer/test_vocab.h"
#include "tokenizer/tokenizer.h"

namespace tandem {
namespace {

using Json = nlohmann::json;
using testing::IdOf;

const std::string kSp = "\xE2\x96\x81";

// A miniature Gemma-style tokenizer.json: BPE with byte fallback over "▁"-escaped text.
Json MiniTokenizerJson() {
  Json vocab = Json::object();
  const char* texts[] = {"<pad>",  "<eos>", "<bos>", "<unk>", "<mask>",       "<0x41>",
                         "<0xFF>", "a",     "b",     "ab",    "\xE2\x96\x81", "\u2581a"};
  int id = 0;
  for (const char* t : texts) vocab[t] = id++;
  vocab["<|channel>"] = 20;  // leaves ids 12..19 unassigned
  Json added = Json::array();
  const auto add = [&added](int id, const std::string& content, bool special) {
    added.push_back({{"id", id},
                     {"content", content},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", special}});
  };
  add(0, "<pad>", true);
  add(1, "<eos>", true);
  add(2, "<bos>", true);
  add(3, "<unk>", true);
  add(4, "<mask>", false);
  add(20, "<|channel>", true);
  add(21, "<start_of_turn>", true);  // beyond the model vocabulary, as Gemma 3's image token
  return {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", kSp}}},
      {"pre_tokenizer",
       {{"type", "Split"}, {"pattern", {{"String", " "}}}, {"behavior", "MergedWithPrevious"}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", Json::array({{{"SpecialToken", {{"id", "<bos>"}, {"type_id", 0}}}},
                                {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})}}},
      {"decoder", nullptr},
      {"model",
       {{"type", "BPE"},
        {"byte_fallback", true},
        {"ignore_merges", false},
        {"unk_token", "<unk>"},
        {"vocab", vocab},
        {"merges", Json::array({Json::array({"a", "b"}), Json::array({kSp, "a"}),
                                Json::array({"x y", "z"})})}}},
  };
}

Vocab FromJson(const Json& j, const std::string& config = "") {
  return VocabFromTokenizerJson(j.dump(), config, "mini/tokenizer.json");
}

void ExpectError(const Json& j, ErrorKind kind, const std::string& needle) {
  try {
    FromJson(j);
    ADD_FAILURE() << "no error; wanted " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mini/tokenizer.json"), std::string::npos) << e.what();
  }
}

TEST(TokenizerJsonTest, TypesFollowAddedTokensAndBytePattern) {
  const Vocab v = FromJson(MiniTokenizerJson());
  ASSERT_EQ(v.size(), 22u);
  EXPECT_EQ(v.types[0], TokenType::kControl);      // special added token
  EXPECT_EQ(v.types[3], TokenType::kUnknown);      // the model's unk_token
  EXPECT_EQ(v.types[4], TokenType::kUserDefined);  // non-special added token
  EXPECT_EQ(v.types[5], TokenType::kByte);
  EXPECT_EQ(v.types[7], TokenType::kNormal);
  EXPECT_EQ(v.tokens[12], "[PAD12]");  // unassigned ids become unused padding
  EXPECT_EQ(v.types[12], TokenType::kUnused);
  EXPECT_EQ(v.tokens[20], "<|channel>");
  EXPECT_EQ(v.types[20], TokenType::kUserDefined);  // Gemma 4 markup is always rendered
  EXPECT_EQ(v.tokens[21], "<start_of_turn>");
  EXPECT_EQ(v.types[21], TokenType::kControl);
  EXPECT_EQ(v.scores.size(), v.size());
}

TEST(TokenizerJsonTest, MergesAndSpecialIds) {
  const Vocab v = FromJson(MiniTokenizerJson());
  // The pair with a space inside a half is dropped: it can never apply.
  EXPECT_EQ(v.merges, (std::vector<std::string>{"a b", kSp + " a"}));
  EXPECT_EQ(v.bos_id, 2);
  EXPECT_EQ(v.eos_id, 1);
  EXPECT_EQ(v.pad_id, 0);
  EXPECT_EQ(v.unk_id, 3);
  EXPECT_EQ(v.mask_id, 4);
  EXPECT_TRUE(v.add_bos);  // from the post-processor template
  EXPECT_FALSE(v.add_eos);
  const Tokenizer t(v);
  EXPECT_EQ(t.Encode("ab a<mask>"),
            (std::vector<int32_t>{2, IdOf(v, "ab"), IdOf(v, kSp + "a"), IdOf(v, "<mask>")}));
}

TEST(TokenizerJsonTest, ConfigOverridesSpecialTokensAndFlags) {
  const Vocab v = FromJson(MiniTokenizerJson(),
                           R"({"bos_token": {"content": "<pad>"}, "eos_token": "<start_of_turn>",
                               "add_bos_token": false, "add_eos_token": true})");
  EXPECT_EQ(v.bos_id, 0);
  EXPECT_EQ(v.eos_id, 21);
  EXPECT_FALSE(v.add_bos);
  EXPECT_TRUE(v.add_eos);
}

TEST(TokenizerJsonTest, StringMergesAreKeptVerbatim) {
  Json j = MiniTokenizerJson();
  j["model"]["merges"] = Json::array({"a b", kSp + " a"});
  EXPECT_EQ(FromJson(j).merges, (std::vector<std::string>{"a b", kSp + " a"}));
}

TEST(TokenizerJsonTest, RejectsWhatTheBpeCannotReproduce) {
  Json not_bpe = MiniTokenizerJson();
  not_bpe["model"]["type"] = "Unigram";
  ExpectError(not_bpe, ErrorKind::kUnsupported, "model.type");
  Json no_fallback = MiniTokenizerJson();
  no_fallback["model"]["byte_fallback"] = false;
  ExpectError(no_fallback, ErrorKind::kUnsupported, "byte_fallback");
  Json ignore = MiniTokenizerJson();
  ignore["model"]["ignore_merges"] = true;
  ExpectError(ignore, ErrorKind::kUnsupported, "ignore_merges");
  Json prefix = MiniTokenizerJson();
  prefix["normalizer"] = {{"type", "Sequence"},
                          {"normalizers", Json::array({{{"type", "Prepend"}, {"prepend", kSp}},
                                                       prefix["normalizer"]})}};
  ExpectError(prefix, ErrorKind::kUnsupported, "normalizer");
  Json none = MiniTokenizerJson();
  none.erase("normalizer");
  ExpectError(none, ErrorKind::kUnsupported, "normalizer");
}

TEST(TokenizerJsonTest, MalformedInputIsCorrupt) {
  try {
    VocabFromTokenizerJson("{not json", "", "broken.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos);
  }
  Json no_model = MiniTokenizerJson();
  no_model.erase("model");
  ExpectError(no_model, ErrorKind::kCorrupt, "model");
  Json bad_id = MiniTokenizerJson();
  bad_id["model"]["vocab"]["a"] = -5;
  ExpectError(bad_id, ErrorKind::kCorrupt, "model.vocab['a']");
  Json bad_merge = MiniTokenizerJson();
  bad_merge["model"]["merges"] = Json::array({42});
  ExpectError(bad_merge, ErrorKind::kCorrupt, "model.merges[0]");
  Json sparse = MiniTokenizerJson();
  sparse["model"]["vocab"]["far"] = 1 << 30;
  ExpectError(sparse, ErrorKind::kCorrupt, "unassigned");
  Json bad_added = MiniTokenizerJson();
  bad_added["added_tokens"][0].erase("content");
  ExpectError(bad_added, ErrorKind::kCorrupt, "added_tokens[0]");
}

TEST(TokenizerJsonTest, MissingFileIsAnIoError) {
  try {
    LoadVocabFromTokenizerJson("/nonexistent/tokenizer.json");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
  }
}

}  // namespace
}  // namespace tandem
