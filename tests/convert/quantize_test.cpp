// `tandem quantize` on converted files: metadata, the type mix in the file, values equal to the
// reference quantizers, --keep-type, requantization, determinism over thread counts, and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "base/error.h"
#include "convert/quantizer.h"
#include "convert/safetensors_test_util.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "hf_checkpoint.h"
#include "tensor/quantize.h"
#include "test_util.h"

namespace tandem::testing {
namespace {

QuantizeOptions Options(QuantPreset preset, int threads = 0) {
  QuantizeOptions o;
  o.preset = preset;
  o.progress = false;
  o.n_threads = threads;
  return o;
}

// A converted f32 31B-like model (hidden 256: the K-quants fit) in a fresh directory.
std::string F32Model(const std::string& dir) {
  WriteHfCheckpoint(MakeHfCheckpoint(Dense31bLikeSpec()), dir + "/hf", 1);
  Convert(dir + "/hf", dir + "/f32.gguf", TensorType::kF32);
  return dir + "/f32.gguf";
}

TEST(QuantizeTest, Q4KMWritesTheMixAndKeepsEverythingElse) {
  const std::string dir = ScratchDir("q4km");
  const std::string in = F32Model(dir);
  const QuantizeSummary s = QuantizeGguf(in, dir + "/q.gguf", Options(QuantPreset::kQ4_K_M));
  const auto a = GgufFile::Open(in);
  const auto b = GgufFile::Open(dir + "/q.gguf");
  EXPECT_EQ(b->GetU32("general.file_type"), 15u);
  EXPECT_EQ(b->GetU32("general.quantization_version"), 2u);
  // Every other key is copied unchanged, in order.
  ASSERT_EQ(a->metadata().size(), b->metadata().size());
  for (size_t i = 0; i < a->metadata().size(); ++i) {
    const GgufKv& x = a->metadata().entries()[i];
    const GgufKv& y = b->metadata().entries()[i];
    EXPECT_EQ(x.key, y.key);
    if (x.key != "general.file_type") {
      EXPECT_TRUE(x.value == y.value) << x.key;
    }
  }
  ASSERT_EQ(a->tensors().size(), b->tensors().size());
  for (size_t i = 0; i < a->tensors().size(); ++i) {
    const TensorInfo& t = b->tensors()[i];
    EXPECT_EQ(t.name, a->tensors()[i].name);
    EXPECT_EQ(t.ne, a->tensors()[i].ne);
    if (t.n_dims == 1) {
      EXPECT_EQ(t.type, TensorType::kF32) << t.name;
    }
  }
  EXPECT_EQ(b->FindTensor("token_embd.weight")->type, TensorType::kQ6_K);  // tied head
  EXPECT_EQ(b->FindTensor("blk.1.attn_q.weight")->type, TensorType::kQ4_K);
  // use_more_bits(i, 6) over the six attn_v / ffn_down layers: i = 2 and 5.
  for (int l = 0; l < 6; ++l) {
    const TensorType more = (l == 2 || l == 5) ? TensorType::kQ6_K : TensorType::kQ4_K;
    EXPECT_EQ(b->FindTensor("blk." + std::to_string(l) + ".ffn_down.weight")->type, more) << l;
    if (const TensorInfo* v = b->FindTensor("blk." + std::to_string(l) + ".attn_v.weight")) {
      // Five attn_v (the full layer has V = K): use_more_bits(i, 5) holds for i = 2 and 4.
      EXPECT_EQ(v->type, l == 2 || l == 4 ? TensorType::kQ6_K : TensorType::kQ4_K) << l;
    }
  }
  EXPECT_EQ(s.n_tensors, a->tensors().size());
  EXPECT_EQ(s.n_fallback, 0u);
  EXPECT_LT(s.bytes_out * 4, s.bytes_in);  // ~4.5-6.5 bits of 32
  uint64_t data = 0;
  for (const TensorInfo& t : b->tensors()) data += t.nbytes;
  EXPECT_EQ(s.bytes_out, data);
  const std::string text = FormatQuantizeSummary(s);
  EXPECT_NE(text.find("q4_K x"), std::string::npos) << text;
  EXPECT_NE(text.find("bits per weight"), std::string::npos) << text;
}

TEST(QuantizeTest, QuantizedRowsEqualTheReferenceQuantizers) {
  const std::string dir = ScratchDir("rows");
  WriteHfCheckpoint(MakeHfCheckpoint(Moe26bLikeSpec()), dir + "/hf", 1);
  Convert(dir + "/hf", dir + "/f32.gguf", TensorType::kF32);
  QuantizeGguf(dir + "/f32.gguf", dir + "/q.gguf", Options(QuantPreset::kQ5_K_M));
  const auto a = GgufFile::Open(dir + "/f32.gguf");
  const auto b = GgufFile::Open(dir + "/q.gguf");
  int changed = 0;
  for (const TensorInfo& t : b->tensors()) {
    const TensorInfo& src = *a->FindTensor(t.name);
    if (t.type == src.type) {
      EXPECT_EQ(std::memcmp(a->TensorData(src), b->TensorData(t), t.nbytes), 0) << t.name;
      continue;
    }
    ++changed;
    const uint64_t n = t.ne[0];
    const size_t row = RowBytes(GetTensorTypeTraits(t.type), n);
    std::vector<uint8_t> want(row);
    const auto* f = reinterpret_cast<const float*>(a->TensorData(src));
    for (uint64_t r = 0; r < t.n_elements() / n; ++r) {
      QuantizeRow(t.type, f + r * n, want.data(), static_cast<int64_t>(n));
      ASSERT_EQ(std::memcmp(b->TensorData(t) + r * row, want.data(), row), 0) << t.name << " " << r;
    }
  }
  EXPECT_GT(changed, 20);
  EXPECT_EQ(b->FindTensor("blk.0.ffn_gate_inp.weight")->type, TensorType::kF32);  // router
}

TEST(QuantizeTest, BytesDoNotDependOnTheThreadCount) {
  const std::string dir = ScratchDir("threads");
  const std::string in = F32Model(dir);
  QuantizeGguf(in, dir + "/t1.gguf", Options(QuantPreset::kQ4_K_M, 1));
  QuantizeGguf(in, dir + "/t2.gguf", Options(QuantPreset::kQ4_K_M, 2));
  const std::vector<uint8_t> a = ReadAll(dir + "/t1.gguf"), b = ReadAll(dir + "/t2.gguf");
  EXPECT_GT(a.size(), 100000u);
  EXPECT_TRUE(a == b);
}

TEST(QuantizeTest, KeepTypeAndRequantization) {
  const std::string dir = ScratchDir("keep");
  const std::string in = F32Model(dir);
  QuantizeOptions o = Options(QuantPreset::kQ8_0);
  o.keep_types = {"blk.0.attn_q.weight", "token_embd.weight"};
  QuantizeGguf(in, dir + "/q8.gguf", o);
  const auto f = GgufFile::Open(dir + "/q8.gguf");
  EXPECT_EQ(f->FindTensor("blk.0.attn_q.weight")->type, TensorType::kF32);
  EXPECT_EQ(f->FindTensor("token_embd.weight")->type, TensorType::kF32);
  EXPECT_EQ(f->FindTensor("blk.1.attn_q.weight")->type, TensorType::kQ8_0);

  o.keep_types = {"blk.0.attn_qq.weight"};
  try {
    QuantizeGguf(in, dir + "/bad.gguf", o);
    ADD_FAILURE() << "an unknown --keep-type name must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_qq.weight"), std::string::npos);
  }
  // A Q8_0 input is not re-quantized without --allow-requantize.
  try {
    QuantizeGguf(dir + "/q8.gguf", dir + "/q4.gguf", Options(QuantPreset::kQ4_0));
    ADD_FAILURE() << "requantizing must need --allow-requantize";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("--allow-requantize"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/q4.gguf"));
  QuantizeOptions re = Options(QuantPreset::kQ4_0);
  re.allow_requantize = true;
  QuantizeGguf(dir + "/q8.gguf", dir + "/q4.gguf", re);
  EXPECT_EQ(GgufFile::Open(dir + "/q4.gguf")->FindTensor("blk.1.attn_q.weight")->type,
            TensorType::kQ4_0);
}

TEST(QuantizeTest, DropsSplitKeysAndRejectsNonFiniteValuesWithoutOutput) {
  const std::string dir = ScratchDir("nan");
  std::vector<float> values(64 * 4, 0.5f);
  GgufWriter w;
  w.SetString("general.architecture", "gemma4");
  w.SetU32("gemma4.block_count", 1);
  w.SetU32("split.count", 1);
  w.Set("split.no", GgufValue::Scalar<uint16_t>(0));
  const uint64_t ne[] = {64, 4};
  auto bytes = [&values] {
    std::vector<uint8_t> b(values.size() * 4);
    std::memcpy(b.data(), values.data(), b.size());
    return b;
  };
  w.AddTensor("blk.0.attn_q.weight", TensorType::kF32, ne, bytes());
  w.Write(dir + "/ok.gguf");
  QuantizeGguf(dir + "/ok.gguf", dir + "/ok_q.gguf", Options(QuantPreset::kQ8_0));
  const auto q = GgufFile::Open(dir + "/ok_q.gguf");
  EXPECT_FALSE(q->HasKey("split.count"));
  EXPECT_FALSE(q->HasKey("split.no"));

  values[64 * 2 + 7] = std::numeric_limits<float>::quiet_NaN();
  GgufWriter bad;
  bad.CopyMetadata(GgufFile::Open(dir + "/ok.gguf")->metadata());
  bad.AddTensor("blk.0.attn_q.weight", TensorType::kF32, ne, bytes());
  bad.Write(dir + "/nan.gguf");
  WriteText(dir + "/out.gguf", "previous");
  try {
    QuantizeGguf(dir + "/nan.gguf", dir + "/out.gguf", Options(QuantPreset::kQ8_0));
    ADD_FAILURE() << "a NaN must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("'blk.0.attn_q.weight': row 2"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(ReadAll(dir + "/out.gguf"),
            std::vector<uint8_t>({'p', 'r', 'e', 'v', 'i', 'o', 'u', 's'}));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.gguf.tmp"));
}

}  // namespace
}  // namespace tandem::testing
