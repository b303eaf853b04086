// Broken checkpoints fail `tandem convert` with a clear error (kind, culprit) and never replace
// an existing output file: truncated or missing shards, bad headers, wrong dtypes or shapes,
// unmapped or unexpected names, unknown architectures, and bad values found mid-stream.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>

#include "base/error.h"
#include "convert/safetensors_test_util.h"
#include "hf_checkpoint.h"
#include "test_util.h"

namespace tandem::testing {
namespace {

namespace fs = std::filesystem;

const std::vector<uint8_t> kPrevious = {'o', 'l', 'd'};

// Writes the checkpoint of `spec` after `edit`, damages the directory with `damage`, converts
// over an existing output and expects Error(kind) containing every needle, the old output intact
// and no temporary file left.
void ExpectConvertError(const HfSpec& spec, const std::function<void(HfCheckpoint&)>& edit,
                        const std::function<void(const std::string&)>& damage, ErrorKind kind,
                        std::vector<std::string> needles, int n_shards = 2) {
  HfCheckpoint ckpt = MakeHfCheckpoint(spec);
  if (edit) edit(ckpt);
  const std::string dir = ScratchDir("c");
  WriteHfCheckpoint(ckpt, dir + "/hf", n_shards);
  if (damage) damage(dir + "/hf");
  const std::string out = dir + "/out.gguf";
  WriteBytes(out, kPrevious);
  try {
    Convert(dir + "/hf", out, TensorType::kQ8_0);
    ADD_FAILURE() << "conversion succeeded; expected an error containing '" << needles[0] << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const std::string& n : needles) {
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << n << "' in: " << e.what();
    }
  }
  EXPECT_EQ(ReadAll(out), kPrevious);
  EXPECT_FALSE(fs::exists(out + ".tmp"));
}

HfTensor* Find(HfCheckpoint& c, const std::string& suffix) {
  for (HfTensor& t : c.tensors) {
    if (t.name.size() >= suffix.size() && t.name.substr(t.name.size() - suffix.size()) == suffix) {
      return &t;
    }
  }
  ADD_FAILURE() << "no tensor ending in " << suffix;
  return &c.tensors[0];
}

const char* kShard2 = "/model-00002-of-00002.safetensors";

TEST(ConvertErrorTest, TruncatedShard) {
  ExpectConvertError(E2bLikeSpec(), nullptr,
                     [](const std::string& hf) {
                       fs::resize_file(hf + kShard2, fs::file_size(hf + kShard2) - 100);
                     },
                     ErrorKind::kCorrupt, {"truncated", "model-00002-of-00002.safetensors"});
}

TEST(ConvertErrorTest, MissingShard) {
  ExpectConvertError(E2bLikeSpec(), nullptr,
                     [](const std::string& hf) { fs::remove(hf + kShard2); }, ErrorKind::kNotFound,
                     {"model-00002-of-00002.safetensors", "does not exist"});
}

TEST(ConvertErrorTest, BadJsonHeader) {
  ExpectConvertError(E2bLikeSpec(), nullptr,
                     [](const std::string& hf) {
                       std::vector<uint8_t> bytes = ReadAll(hf + kShard2);
                       *std::find(bytes.begin() + 8, bytes.end(), ':') =
                           '#';  // breaks the JSON syntax
                       WriteBytes(hf + kShard2, bytes);
                     },
                     ErrorKind::kCorrupt, {"bad JSON header", "model-00002-of-00002.safetensors"});
}

TEST(ConvertErrorTest, WrongDtype) {
  ExpectConvertError(E2bLikeSpec(),
                     [](HfCheckpoint& c) {
                       HfTensor* t = Find(c, "layers.1.self_attn.q_proj.weight");
                       t->dtype = "I64";
                       t->ints.assign(t->values.size(), 1);
                     },
                     nullptr, ErrorKind::kCorrupt,
                     {"layers.1.self_attn.q_proj.weight", "dtype I64"});
  // A valid safetensors dtype tandem does not convert: 8-byte ints relabelled F64.
  ExpectConvertError(
      Moe26bLikeSpec(),
      [](HfCheckpoint& c) {
        HfTensor* t = Find(c, "layers.0.mlp.up_proj.weight");
        t->dtype = "I64";
        t->ints.assign(t->values.size(), 0);
      },
      [](const std::string& hf) {
        const std::vector<uint8_t> bytes = ReadAll(hf + "/model.safetensors");
        std::string text(bytes.begin(), bytes.end());
        text.replace(text.find("\"I64\""), 5, "\"F64\"");
        WriteBytes(hf + "/model.safetensors", {text.begin(), text.end()});
      },
      ErrorKind::kCorrupt, {"layers.0.mlp.up_proj.weight", "dtype F64"}, 1);
}

TEST(ConvertErrorTest, UnexpectedShape) {
  ExpectConvertError(
      E2bLikeSpec(),
      [](HfCheckpoint& c) {
        HfTensor* t = Find(c, "layers.2.self_attn.o_proj.weight");
        t->shape = {t->shape[1], t->shape[0]};  // transposed
      },
      nullptr, ErrorKind::kCorrupt,
      {"layers.2.self_attn.o_proj.weight", "has shape [256, 128]", "expected [128, 256]"});
}

TEST(ConvertErrorTest, UnmappedTensorNamesAreListed) {
  ExpectConvertError(Dense31bLikeSpec(),
                     [](HfCheckpoint& c) {
                       HfTensor extra = c.tensors[0];
                       extra.name = "model.language_model.layers.0.self_attn.qkv_proj.weight";
                       c.tensors.push_back(extra);
                       extra.name = "model.language_model.layers.1.mlp.gate_proj.bias";
                       c.tensors.push_back(extra);
                     },
                     nullptr, ErrorKind::kUnsupported,
                     {"2 tensors have no GGUF name", "layers.0.self_attn.qkv_proj.weight",
                      "layers.1.mlp.gate_proj.bias"});
}

TEST(ConvertErrorTest, UnknownArchitecture) {
  ExpectConvertError(Moe26bLikeSpec(),
                     [](HfCheckpoint& c) { c.config["architectures"] = {"Gemma3ForCausalLM"}; },
                     nullptr, ErrorKind::kUnsupported,
                     {"unknown architecture 'Gemma3ForCausalLM'", "config.json"});
}

TEST(ConvertErrorTest, MissingAndUnexpectedTensors) {
  ExpectConvertError(
      Moe26bLikeSpec(),
      [](HfCheckpoint& c) {
        c.tensors.erase(c.tensors.begin() +
                        (Find(c, "layers.3.mlp.down_proj.weight") - c.tensors.data()));
      },
      nullptr, ErrorKind::kNotFound, {"lacks 1 tensors", "blk.3.ffn_down.weight"});
  // V = K model: a v_proj on a full layer does not belong.
  ExpectConvertError(Moe26bLikeSpec(),
                     [](HfCheckpoint& c) {
                       HfTensor v = *Find(c, "layers.2.self_attn.k_proj.weight");
                       v.name = "model.layers.2.self_attn.v_proj.weight";
                       c.tensors.push_back(v);
                     },
                     nullptr, ErrorKind::kCorrupt,
                     {"do not belong", "layers.2.self_attn.v_proj.weight"});
}

TEST(ConvertErrorTest, MissingFiles) {
  ExpectConvertError(E2bLikeSpec(), nullptr,
                     [](const std::string& hf) { fs::remove(hf + "/tokenizer.json"); },
                     ErrorKind::kNotFound, {"tokenizer.json"});
  ExpectConvertError(E2bLikeSpec(), nullptr,
                     [](const std::string& hf) { fs::remove(hf + "/config.json"); },
                     ErrorKind::kNotFound, {"config.json"});
}

TEST(ConvertErrorTest, TokenizerLargerThanTheEmbedding) {
  ExpectConvertError(Moe26bLikeSpec(), [](HfCheckpoint& c) { c.vocab = MakeSyntheticVocab(600); },
                     nullptr, ErrorKind::kCorrupt, {"600 tokens", "vocab_size 512"});
}

TEST(ConvertErrorTest, BadValuesFoundWhileWritingLeaveNoOutput) {
  ExpectConvertError(Dense31bLikeSpec(),
                     [](HfCheckpoint& c) {
                       HfTensor* t = Find(c, "layers.4.mlp.up_proj.weight");
                       t->values[3 * t->shape[1] + 5] = std::numeric_limits<float>::infinity();
                     },
                     nullptr, ErrorKind::kCorrupt, {"blk.4.ffn_up.weight", "row 3", "non-finite"});
  ExpectConvertError(
      AssistantSpec(),
      [](HfCheckpoint& c) { Find(c, "masked_embedding.token_ordering")->ints[17] = 512; }, nullptr,
      ErrorKind::kCorrupt, {"token_ordering", "entry 17 = 512"}, 1);
}

}  // namespace
}  // namespace tandem::testing
