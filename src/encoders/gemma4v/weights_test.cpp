// The random mmproj writer and the weight binder: llama.cpp's names, shapes and converter
// dtypes on the way out; every tensor bound with its shape and type checked on the way in, and
// a clear error for a missing or misshapen tensor or a clamp bound that is not one F32.
#include "encoders/gemma4v/weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "encoders/encoders_test_util.h"
#include "encoders/gemma4v/mmproj_layout.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/gemma4v/random_mmproj.h"
#include "encoders/gemma4v/tensors.h"
#include "encoders/mmproj_file.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::F32Bytes;
using testing::RewriteGguf;
using testing::TempPath;

std::string WriteTiny(const std::string& name, TensorType type,
                      const std::string& preset = "tiny") {
  RandomMmprojOptions o;
  o.weight_type = type;
  const std::string path = TempPath(name);
  WriteRandomGemma4VisionMmproj(Gemma4VisionPreset(preset), o, path);
  return path;
}

Gemma4VisionWeights BindFile(const std::string& path) {
  auto f = MmprojFile::Open(path);
  return Gemma4VisionWeights::Bind(f->gguf(), Gemma4VisionConfig::FromMmproj(*f));
}

TEST(Gemma4VisionMmproj, WriterUsesTheConvertersNamesShapesAndDtypes) {
  for (TensorType wtype :
       {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0}) {
    const std::string path = WriteTiny("vw_dtypes.gguf", wtype);
    auto f = GgufFile::Open(path);
    EXPECT_EQ(f->GetString("general.architecture"), "clip");
    EXPECT_EQ(f->GetString("general.type"), "mmproj");
    std::map<std::string, const TensorInfo*> by_name;
    for (const TensorInfo& t : f->tensors()) by_name[t.name] = &t;
    const Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
    const auto list = Gemma4VisionTensorList(c);
    EXPECT_EQ(by_name.size(), list.size());
    for (const VisionTensorSpec& spec : list) {
      ASSERT_TRUE(by_name.count(spec.name)) << spec.name;
      const TensorInfo& t = *by_name[spec.name];
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(t.ne[i], i < spec.ne.size() ? spec.ne[i] : 1) << spec.name;
      }
      TensorType want = TensorType::kF32;
      if (spec.role == VisionTensorRole::kMatrix) want = wtype;
      if (spec.role == VisionTensorRole::kPatchEmbedding && wtype == TensorType::kF16) {
        want = TensorType::kF16;
      }
      EXPECT_EQ(t.type, want) << spec.name << " for " << TensorTypeName(wtype);
    }
  }
  // Every name of §2.4 for a layer, and the tower-wide ones.
  auto f = GgufFile::Open(WriteTiny("vw_names.gguf", TensorType::kF32));
  for (const char* name : {"v.patch_embd.weight",
                           "v.position_embd.weight",
                           "v.blk.1.ln1.weight",
                           "v.blk.1.attn_q.weight",
                           "v.blk.1.attn_k.weight",
                           "v.blk.1.attn_v.weight",
                           "v.blk.1.attn_out.weight",
                           "v.blk.1.attn_q_norm.weight",
                           "v.blk.1.attn_k_norm.weight",
                           "v.blk.1.attn_post_norm.weight",
                           "v.blk.1.ln2.weight",
                           "v.blk.1.ffn_gate.weight",
                           "v.blk.1.ffn_up.weight",
                           "v.blk.1.ffn_down.weight",
                           "v.blk.1.ffn_post_norm.weight",
                           "v.blk.1.attn_q.input_min",
                           "v.blk.1.ffn_down.output_max",
                           "v.std_bias",
                           "v.std_scale",
                           "mm.input_projection.weight"}) {
    EXPECT_NE(f->FindTensor(name), nullptr) << name;
  }
  EXPECT_EQ(f->FindTensor("v.blk.0.out_scale.weight"), nullptr);
}

TEST(Gemma4VisionMmproj, RowsThatDoNotFitTheBlocksFallBackToF16) {
  EXPECT_EQ(MmprojTensorType(VisionTensorRole::kMatrix, 4304, TensorType::kQ8_0), TensorType::kF16);
  EXPECT_EQ(MmprojTensorType(VisionTensorRole::kMatrix, 1152, TensorType::kQ8_0),
            TensorType::kQ8_0);
  EXPECT_EQ(MmprojTensorType(VisionTensorRole::kPatchEmbedding, 16, TensorType::kBF16),
            TensorType::kF32);
  EXPECT_EQ(MmprojTensorType(VisionTensorRole::kPositionTable, 1152, TensorType::kF16),
            TensorType::kF32);
}

TEST(Gemma4VisionMmproj, BindReadsEveryTensorBack) {
  const std::string path = WriteTiny("vw_bind.gguf", TensorType::kF32);
  const Gemma4VisionWeights w = BindFile(path);
  auto f = GgufFile::Open(path);
  ASSERT_EQ(w.layers.size(), 2u);
  EXPECT_EQ(w.patch_embd.rows, 32);
  EXPECT_EQ(w.patch_embd.cols, 3 * 16 * 16);
  EXPECT_EQ(w.position_embd.n_rows, 128);  // both slabs
  EXPECT_EQ(w.position_embd.n_cols, 32);
  EXPECT_EQ(w.input_projection.rows, 128);
  EXPECT_EQ(w.input_projection.cols, 32);
  EXPECT_EQ(w.std_bias.size(), 32u);
  const Gemma4VisionLayerWeights& l = w.layers[1];
  EXPECT_EQ(l.attn_q_norm.size(), 16u);
  EXPECT_EQ(l.ffn_down.w.rows, 32);
  EXPECT_EQ(l.ffn_down.w.cols, 64);
  EXPECT_FALSE(l.has_out_scale);
  // The clamp bounds are the file's values, minimums below maximums, all finite.
  auto value = [&](const char* name) {
    return *reinterpret_cast<const float*>(f->TensorData(*f->FindTensor(name)));
  };
  EXPECT_EQ(l.attn_k.in_min, value("v.blk.1.attn_k.input_min"));
  EXPECT_EQ(l.ffn_down.out_max, value("v.blk.1.ffn_down.output_max"));
  for (const ClippedLinear* lin :
       {&l.attn_q, &l.attn_k, &l.attn_v, &l.attn_out, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
    EXPECT_TRUE(lin->ClipsInput() && lin->ClipsOutput());
    EXPECT_LT(lin->in_min, -0.9f);
    EXPECT_GT(lin->out_max, 0.9f);
    EXPECT_TRUE(std::isfinite(lin->in_min) && std::isfinite(lin->out_max));
  }
  // The 26B/31B-style file without clamps binds unclipped linears.
  Gemma4VisionConfig plain = Gemma4VisionPreset("tiny");
  plain.clipped_linears = false;
  plain.standardize = false;
  const std::string plain_path = TempPath("vw_plain.gguf");
  WriteRandomGemma4VisionMmproj(plain, {}, plain_path);
  const Gemma4VisionWeights p = BindFile(plain_path);
  EXPECT_FALSE(p.layers[0].attn_q.ClipsInput() || p.layers[0].attn_q.ClipsOutput());
  EXPECT_TRUE(p.std_bias.empty() && p.std_scale.empty());
}

TEST(Gemma4VisionMmproj, OptionalTensorsAreBoundWhenPresent) {
  const std::string src = WriteTiny("vw_opt_src.gguf", TensorType::kF32);
  const std::string dst = TempPath("vw_opt.gguf");
  // out_scale on layer 0, a single clamp bound left on attn_q (the rest dropped).
  RewriteGguf(
      src, dst,
      [](GgufWriter& w) {
        const uint64_t one[] = {1};
        w.AddTensor("v.blk.0.out_scale.weight", TensorType::kF32, one, F32Bytes({0.75f}));
      },
      [](GgufWriter&, const TensorInfo& t) {
        const bool bound = t.name.find("put_m") != std::string::npos;
        return bound && t.name != "v.blk.0.attn_q.input_max";
      });
  const Gemma4VisionWeights w = BindFile(dst);
  EXPECT_TRUE(w.layers[0].has_out_scale);
  EXPECT_EQ(w.layers[0].out_scale, 0.75f);
  EXPECT_FALSE(w.layers[1].has_out_scale);
  const ClippedLinear& q = w.layers[0].attn_q;
  EXPECT_TRUE(q.ClipsInput());
  EXPECT_FALSE(q.ClipsOutput());
  EXPECT_EQ(q.in_min, -ClippedLinear::kNone);
  EXPECT_LT(q.in_max, ClippedLinear::kNone);
  EXPECT_FALSE(w.layers[0].attn_k.ClipsInput());
}

// Rewrites the tiny file with `name` replaced by a tensor of `type` and `ne` (or dropped when
// ne is empty), and returns the bind error.
std::string BindErrorWith(const std::string& name, TensorType type, std::vector<uint64_t> ne) {
  static const std::string src = WriteTiny("vw_err_src.gguf", TensorType::kF32);
  const std::string dst = TempPath("vw_err.gguf");
  RewriteGguf(src, dst, nullptr, [&](GgufWriter& w, const TensorInfo& t) {
    if (t.name != name) return false;
    if (ne.empty()) return true;
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    std::vector<uint8_t> bytes(RowBytes(GetTensorTypeTraits(type), ne[0]) * (n / ne[0]));
    w.AddTensor(name, type, ne, std::move(bytes));
    return true;
  });
  const std::string msg = ErrorOf([&] { BindFile(dst); });
  EXPECT_NE(msg.find(dst), std::string::npos) << msg;
  EXPECT_NE(msg.find("'" + name + "'"), std::string::npos) << msg;
  return msg;
}

TEST(Gemma4VisionMmproj, BadTensorsAreClearErrors) {
  using T = TensorType;
  EXPECT_NE(BindErrorWith("v.blk.1.attn_q.weight", T::kF32, {32, 16})
                .find("has shape {32, 16}, expected {32, 32}"),
            std::string::npos);
  EXPECT_NE(BindErrorWith("v.blk.0.attn_k_norm.weight", T::kF32, {32})
                .find("has shape {32}, expected {16}"),
            std::string::npos);
  EXPECT_NE(BindErrorWith("v.patch_embd.weight", T::kF32, {16, 16, 4, 32})
                .find("expected {16, 16, 3, 32}"),
            std::string::npos);
  EXPECT_NE(
      BindErrorWith("mm.input_projection.weight", T::kF32, {32, 64}).find("expected {32, 128}"),
      std::string::npos);
  EXPECT_NE(BindErrorWith("v.blk.1.ffn_up.weight", T::kF32, {}).find("missing tensor"),
            std::string::npos);
  EXPECT_NE(BindErrorWith("mm.input_projection.weight", T::kF32, {}).find("missing tensor"),
            std::string::npos);
  EXPECT_NE(
      BindErrorWith("v.blk.0.ffn_gate.input_min", T::kF16, {1}).find("has type f16, expected f32"),
      std::string::npos);
  EXPECT_NE(BindErrorWith("v.blk.0.attn_out.output_max", T::kF32, {2})
                .find("has shape {2}, expected {1}"),
            std::string::npos);
  EXPECT_NE(BindErrorWith("v.blk.1.attn_v.weight", T::kI32, {32, 32}).find("cannot multiply"),
            std::string::npos);
}

TEST(Gemma4VisionMmproj, InvertedOrNanBoundsAreRefused) {
  const std::string src = WriteTiny("vw_nan_src.gguf", TensorType::kF32);
  for (float v : {NAN, 5.0f}) {
    const std::string dst = TempPath("vw_nan.gguf");
    RewriteGguf(src, dst, nullptr, [v](GgufWriter& w, const TensorInfo& t) {
      if (t.name != "v.blk.0.attn_q.input_min") return false;
      const uint64_t one[] = {1};
      w.AddTensor(t.name, TensorType::kF32, one, F32Bytes({v}));
      return true;
    });
    const std::string msg = ErrorOf([&] { BindFile(dst); });
    EXPECT_NE(msg.find(std::isnan(v) ? "is NaN" : "minimum above the maximum"), std::string::npos)
        << msg;
  }
}

}  // namespace
}  // namespace tandem
