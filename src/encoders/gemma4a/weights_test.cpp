// The gemma4a random writer and weight binder: llama.cpp's names, shapes and converter dtypes on
// the way out; every tensor bound with its shape and type checked on the way in, and a clear
// error naming the file and tensor for a missing or misshapen one. Also the file with both
// towers that `tandem mkmodel --mmproj` writes for the E-series: each tower reads its own part.
#include "encoders/gemma4a/weights.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "base/thread_pool.h"
#include "encoders/encoders_test_util.h"
#include "encoders/gemma4a/mmproj_layout.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4a/random_mmproj.h"
#include "encoders/gemma4a/tensors.h"
#include "encoders/gemma4v/encoder.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/gemma4v/random_mmproj.h"
#include "encoders/mmproj_file.h"
#include "encoders/random_mmproj.h"
#include "tensor/dequantize.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::RewriteGguf;
using testing::TempPath;

std::string WriteTiny(const std::string& name, TensorType type) {
  RandomMmprojOptions o;
  o.weight_type = type;
  const std::string path = TempPath(name);
  WriteRandomGemma4AudioMmproj(Gemma4AudioPreset("tiny"), o, path);
  return path;
}

Gemma4AudioWeights BindFile(const std::string& path) {
  auto f = MmprojFile::Open(path);
  return Gemma4AudioWeights::Bind(f->gguf(), Gemma4AudioConfig::FromMmproj(*f));
}

std::vector<float> Values(const GgufFile& f, const std::string& name) {
  const TensorInfo* t = f.FindTensor(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  std::vector<float> out(t->n_elements());
  DequantizeRow(t->type, f.TensorData(*t), out.data(), static_cast<int64_t>(out.size()));
  return out;
}

TEST(Gemma4AudioMmproj, WriterUsesTheConvertersNamesShapesAndDtypes) {
  const Gemma4AudioConfig c = Gemma4AudioPreset("tiny");
  for (TensorType wtype :
       {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0}) {
    SCOPED_TRACE(TensorTypeName(wtype));
    auto f = GgufFile::Open(WriteTiny("aw_dtypes.gguf", wtype));
    EXPECT_EQ(f->GetString("general.architecture"), "clip");
    EXPECT_EQ(f->GetString("general.type"), "mmproj");
    std::map<std::string, const TensorInfo*> by_name;
    for (const TensorInfo& t : f->tensors()) by_name[t.name] = &t;
    const auto list = Gemma4AudioTensorList(c);
    EXPECT_EQ(by_name.size(), list.size());
    for (const AudioTensorSpec& spec : list) {
      ASSERT_TRUE(by_name.count(spec.name)) << spec.name;
      const TensorInfo& t = *by_name[spec.name];
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_EQ(t.ne[i], i < spec.ne.size() ? spec.ne[i] : 1) << spec.name;
      }
    }
    // The converter's rules (independent of the role table): the layers' linears, the relative
    // key projection and the two output projections follow --outtype; the subsampling convs,
    // a.input_projection, the depthwise conv and all 1-D tensors are F32.
    for (const char* name :
         {"a.blk.1.ffn_up.weight", "a.blk.1.ffn_down.weight", "a.blk.1.attn_q.weight",
          "a.blk.1.attn_k.weight", "a.blk.1.attn_v.weight", "a.blk.1.attn_out.weight",
          "a.blk.1.attn_k_rel.weight", "a.blk.1.conv_pw1.weight", "a.blk.1.conv_pw2.weight",
          "a.blk.1.ffn_up_1.weight", "a.blk.1.ffn_down_1.weight", "a.pre_encode.out.weight"}) {
      ASSERT_TRUE(by_name.count(name)) << name;
      EXPECT_EQ(by_name[name]->type, wtype) << name;
    }
    // Rows of O = 48 do not fit Q8_0's blocks of 32: F16, as the converter falls back.
    EXPECT_EQ(by_name["mm.a.input_projection.weight"]->type,
              wtype == TensorType::kQ8_0 ? TensorType::kF16 : wtype);
    for (const char* name :
         {"a.conv1d.0.weight", "a.conv1d.0.norm.weight", "a.conv1d.1.weight",
          "a.conv1d.1.norm.weight", "a.input_projection.weight", "a.blk.0.ffn_norm.weight",
          "a.blk.0.ffn_post_norm.weight", "a.blk.0.attn_pre_norm.weight",
          "a.blk.0.per_dim_scale.weight", "a.blk.0.attn_post_norm.weight",
          "a.blk.0.conv_norm.weight", "a.blk.0.conv_dw.weight", "a.blk.0.norm_conv.weight",
          "a.blk.0.ffn_norm_1.weight", "a.blk.0.ffn_post_norm_1.weight", "a.blk.0.ln2.weight",
          "a.blk.0.attn_q.input_min", "a.blk.0.conv_pw2.output_max", "a.pre_encode.out.bias"}) {
      ASSERT_TRUE(by_name.count(name)) << name;
      EXPECT_EQ(by_name[name]->type, TensorType::kF32) << name;
    }
  }
  // Shapes of §2.5 written out: C0 128, C1 4, Fq 32, Da 32, O 48, Dt 128, K 5.
  auto f = GgufFile::Open(WriteTiny("aw_shapes.gguf", TensorType::kF32));
  auto ne = [&f](const char* name) {
    const TensorInfo* t = f->FindTensor(name);
    return t == nullptr ? std::vector<uint64_t>{}
                        : std::vector<uint64_t>(t->ne.begin(), t->ne.begin() + t->n_dims);
  };
  EXPECT_EQ(ne("a.conv1d.0.weight"), (std::vector<uint64_t>{3, 3, 1, 128}));
  EXPECT_EQ(ne("a.conv1d.1.weight"), (std::vector<uint64_t>{3, 3, 128, 4}));
  EXPECT_EQ(ne("a.input_projection.weight"), (std::vector<uint64_t>{128, 32}));
  EXPECT_EQ(ne("a.blk.0.ffn_up.weight"), (std::vector<uint64_t>{32, 128}));
  EXPECT_EQ(ne("a.blk.0.conv_pw1.weight"), (std::vector<uint64_t>{32, 64}));
  EXPECT_EQ(ne("a.blk.0.conv_dw.weight"), (std::vector<uint64_t>{5, 32}));
  EXPECT_EQ(ne("a.blk.0.per_dim_scale.weight"), (std::vector<uint64_t>{16}));
  EXPECT_EQ(ne("a.pre_encode.out.weight"), (std::vector<uint64_t>{32, 48}));
  EXPECT_EQ(ne("mm.a.input_projection.weight"), (std::vector<uint64_t>{48, 128}));
}

TEST(Gemma4AudioMmproj, RowsThatDoNotFitTheBlocksFallBackToF16) {
  using R = AudioTensorRole;
  EXPECT_EQ(AudioMmprojTensorType(R::kMatrix, 1536, TensorType::kQ8_0), TensorType::kQ8_0);
  EXPECT_EQ(AudioMmprojTensorType(R::kMatrix, 48, TensorType::kQ8_0), TensorType::kF16);
  EXPECT_EQ(AudioMmprojTensorType(R::kMatrix, 48, TensorType::kBF16), TensorType::kBF16);
  EXPECT_EQ(AudioMmprojTensorType(R::kInputProjection, 1024, TensorType::kQ8_0), TensorType::kF32);
  EXPECT_EQ(AudioMmprojTensorType(R::kDepthwiseConv, 5, TensorType::kF16), TensorType::kF32);
  EXPECT_EQ(AudioMmprojTensorType(R::kSubsampleConv, 3, TensorType::kBF16), TensorType::kF32);
}

TEST(Gemma4AudioMmproj, BindReadsEveryTensorBack) {
  auto file = MmprojFile::Open(WriteTiny("aw_bind.gguf", TensorType::kF32));
  const GgufFile* f = &file->gguf();
  const Gemma4AudioWeights w = Gemma4AudioWeights::Bind(*f, Gemma4AudioConfig::FromMmproj(*file));
  EXPECT_EQ(w.conv0, Values(*f, "a.conv1d.0.weight"));
  EXPECT_EQ(w.conv1, Values(*f, "a.conv1d.1.weight"));
  EXPECT_EQ(w.conv1_norm, Values(*f, "a.conv1d.1.norm.weight"));
  EXPECT_EQ(w.input_projection.w.rows, 32);
  EXPECT_EQ(w.input_projection.w.cols, 128);
  EXPECT_EQ(w.output_proj.w.rows, 48);
  EXPECT_EQ(w.output_proj.w.cols, 32);
  EXPECT_EQ(w.output_bias, Values(*f, "a.pre_encode.out.bias"));
  EXPECT_EQ(w.mm_input_projection.w.rows, 128);
  EXPECT_EQ(w.mm_input_projection.w.cols, 48);
  ASSERT_EQ(w.layers.size(), 2u);
  const Gemma4AudioLayerWeights& l = w.layers[1];
  // The GGUF names conv_norm / norm_conv land on the members of the same name.
  EXPECT_EQ(l.conv_norm, Values(*f, "a.blk.1.conv_norm.weight"));
  EXPECT_EQ(l.norm_conv, Values(*f, "a.blk.1.norm_conv.weight"));
  EXPECT_EQ(l.ffn_norm_1, Values(*f, "a.blk.1.ffn_norm_1.weight"));
  EXPECT_EQ(l.ln2, Values(*f, "a.blk.1.ln2.weight"));
  EXPECT_EQ(l.conv_dw, Values(*f, "a.blk.1.conv_dw.weight"));
  EXPECT_EQ(l.per_dim_scale, Values(*f, "a.blk.1.per_dim_scale.weight"));
  EXPECT_EQ(l.conv_pw1.w.rows, 64);
  EXPECT_EQ(l.ffn_down_1.w.rows, 32);
  EXPECT_EQ(l.ffn_down_1.w.cols, 128);
  EXPECT_EQ(l.attn_k_rel.rows, 32);
  EXPECT_EQ(l.ffn_up_1.w.data, f->TensorData(*f->FindTensor("a.blk.1.ffn_up_1.weight")));
  // Each linear has the file's own bounds.
  const ClippedLinear* linears[] = {&l.ffn_up,   &l.ffn_down,  &l.attn_q,   &l.attn_k,
                                    &l.attn_v,   &l.attn_out,  &l.conv_pw1, &l.conv_pw2,
                                    &l.ffn_up_1, &l.ffn_down_1};
  for (int i = 0; i < 10; ++i) {
    SCOPED_TRACE(kAudioClippedLinears[i]);
    const std::string n = AudioLayerTensorName(1, kAudioClippedLinears[i]);
    const ClippedLinear& c = *linears[i];
    EXPECT_EQ(c.in_min, Values(*f, n + ".input_min")[0]);
    EXPECT_EQ(c.out_max, Values(*f, n + ".output_max")[0]);
    EXPECT_EQ(c.w.data, f->TensorData(*f->FindTensor(n + ".weight")));
  }
}

// Rewrites the tiny file with `name` replaced by a tensor of `type` and `ne` (or dropped when
// ne is empty), and returns the bind error, which names the file.
std::string BindErrorWith(const std::string& name, TensorType type, std::vector<uint64_t> ne) {
  static const std::string src = WriteTiny("aw_err_src.gguf", TensorType::kF32);
  const std::string dst = TempPath("aw_err.gguf");
  bool seen = false;
  RewriteGguf(src, dst, nullptr, [&](GgufWriter& w, const TensorInfo& t) {
    if (t.name != name) return false;
    seen = true;
    if (ne.empty()) return true;
    uint64_t n = 1;
    for (uint64_t d : ne) n *= d;
    std::vector<uint8_t> bytes(RowBytes(GetTensorTypeTraits(type), ne[0]) * (n / ne[0]));
    w.AddTensor(name, type, ne, std::move(bytes));
    return true;
  });
  if (!seen && !ne.empty()) {  // an extra tensor
    RewriteGguf(
        src, dst,
        [&](GgufWriter& w) {
          w.AddTensor(name, type, ne,
                      std::vector<uint8_t>(RowBytes(GetTensorTypeTraits(type), ne[0])));
        },
        nullptr);
  }
  const std::string msg = ErrorOf([&] { BindFile(dst); });
  EXPECT_NE(msg.find(dst), std::string::npos) << msg;
  EXPECT_NE(msg.find("'" + name + "'"), std::string::npos) << msg;
  return msg;
}

TEST(Gemma4AudioMmproj, BadTensorsAreClearErrors) {
  using T = TensorType;
  auto has = [](const std::string& msg, const char* want) {
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
  };
  has(BindErrorWith("a.blk.1.attn_q.weight", T::kF32, {32, 16}),
      "has shape {32, 16}, expected {32, 32}");
  has(BindErrorWith("a.blk.0.ffn_up_1.weight", T::kF32, {32, 64}), "expected {32, 128}");
  has(BindErrorWith("a.blk.0.conv_dw.weight", T::kF32, {4, 32}), "expected {5, 32}");
  has(BindErrorWith("a.blk.0.conv_dw.weight", T::kF16, {5, 32}), "has type f16, expected f32");
  has(BindErrorWith("a.blk.1.per_dim_scale.weight", T::kF32, {32}), "expected {16}");
  has(BindErrorWith("a.conv1d.1.weight", T::kF32, {3, 3, 64, 4}), "expected {3, 3, 128, 4}");
  has(BindErrorWith("a.input_projection.weight", T::kF32, {64, 32}), "expected {128, 32}");
  has(BindErrorWith("mm.a.input_projection.weight", T::kF32, {32, 128}), "expected {48, 128}");
  has(BindErrorWith("a.blk.1.conv_pw2.weight", T::kF32, {}), "missing tensor");
  has(BindErrorWith("a.blk.0.ffn_norm_1.weight", T::kF32, {}), "missing tensor");
  has(BindErrorWith("mm.a.input_projection.weight", T::kF32, {}), "missing tensor");
  has(BindErrorWith("a.blk.0.attn_k.input_max", T::kF16, {1}), "has type f16, expected f32");
  has(BindErrorWith("a.blk.1.attn_v.weight", T::kI32, {32, 32}), "cannot multiply");
  has(BindErrorWith("a.blk.0.per_dim_k_scale.weight", T::kF32, {16}),
      "not part of Gemma 4's audio tower");
  has(BindErrorWith("a.conv1d.0.bias", T::kF32, {128}), "not part of Gemma 4's audio tower");
}

TEST(Gemma4AudioMmproj, OptionalTensorsMayBeAbsent) {
  const std::string src = WriteTiny("aw_opt_src.gguf", TensorType::kF32);
  const std::string dst = TempPath("aw_opt.gguf");
  RewriteGguf(src, dst, nullptr, [](GgufWriter&, const TensorInfo& t) {
    return t.name == "a.blk.0.ln2.weight" || t.name == "a.blk.0.attn_k_rel.weight" ||
           t.name == "a.blk.0.per_dim_scale.weight" || t.name == "a.conv1d.0.norm.weight" ||
           t.name == "a.blk.0.attn_q.input_min";
  });
  const Gemma4AudioWeights w = BindFile(dst);
  EXPECT_TRUE(w.layers[0].ln2.empty());
  EXPECT_EQ(w.layers[0].attn_k_rel.data, nullptr);
  EXPECT_TRUE(w.layers[0].per_dim_scale.empty());
  EXPECT_TRUE(w.conv0_norm.empty());
  EXPECT_EQ(w.layers[0].attn_q.in_min, -ClippedLinear::kNone);
  EXPECT_FALSE(w.layers[1].ln2.empty());
}

// What `tandem mkmodel --mmproj` writes for the E-series: one file with both towers, each tower
// reading its own keys and tensors, the vision tower exactly as in a vision-only file.
TEST(Gemma4Mmproj, OneFileHoldsBothTowers) {
  const Gemma4VisionConfig vision = Gemma4VisionPreset("tiny");
  const Gemma4AudioConfig audio = Gemma4AudioPreset("tiny");
  RandomMmprojOptions o;
  o.weight_type = TensorType::kQ8_0;
  const std::string both = TempPath("both.gguf"), alone = TempPath("vision_alone.gguf");
  WriteRandomMmproj(&vision, &audio, o, both);
  WriteRandomGemma4VisionMmproj(vision, o, alone);

  auto file = std::shared_ptr<const MmprojFile>(MmprojFile::Open(both));
  EXPECT_EQ(file->Projector(Modality::kVision), "gemma4v");
  EXPECT_EQ(file->Projector(Modality::kAudio), "gemma4a");
  EXPECT_EQ(file->Describe(), "vision gemma4v, audio gemma4a");
  const Gemma4AudioConfig a = Gemma4AudioConfig::FromMmproj(*file);
  EXPECT_EQ(a.n_embd, 32);
  const Gemma4AudioWeights aw = Gemma4AudioWeights::Bind(file->gguf(), a);
  EXPECT_EQ(aw.layers.size(), 2u);

  // The vision encoder loads the combined file and gives the vision-only file's bits.
  const auto enc_both = Gemma4VisionEncoder::Load(file);
  const auto enc_alone = Gemma4VisionEncoder::Load(alone);
  std::vector<float> rgb(3 * 48 * 48);
  for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<float>((i * 37) % 101) / 100.0f;
  ThreadPool pool(1);
  EXPECT_EQ(enc_both->Encode(rgb.data(), 48, 48, pool),
            enc_alone->Encode(rgb.data(), 48, 48, pool));
  auto g = GgufFile::Open(alone);
  for (const TensorInfo& t : g->tensors()) {
    const TensorInfo* u = file->gguf().FindTensor(t.name);
    ASSERT_NE(u, nullptr) << t.name;
    EXPECT_EQ(u->type, t.type) << t.name;
    EXPECT_EQ(0, std::memcmp(file->gguf().TensorData(*u), g->TensorData(t), t.nbytes)) << t.name;
  }
  // Every tensor of the combined file is one tower's.
  EXPECT_EQ(file->gguf().tensors().size(),
            g->tensors().size() + Gemma4AudioTensorList(audio).size());
}

// The released shape writes and loads (Q4_0 keeps the file small).
TEST(Gemma4AudioMmproj, E2bPresetWritesAndLoads) {
  RandomMmprojOptions o;
  o.weight_type = TensorType::kQ4_0;
  const std::string path = TempPath("aw_e2b.gguf");
  WriteRandomGemma4AudioMmproj(Gemma4AudioPreset("e2b"), o, path);
  auto f = MmprojFile::Open(path);
  const Gemma4AudioConfig c = Gemma4AudioConfig::FromMmproj(*f);
  EXPECT_EQ(c.n_embd, 1024);
  EXPECT_EQ(c.sub_channels1, 32);
  EXPECT_EQ(c.n_out, 1536);
  const Gemma4AudioWeights w = Gemma4AudioWeights::Bind(f->gguf(), c);
  EXPECT_EQ(w.layers.size(), 12u);
  EXPECT_EQ(w.layers[11].ffn_up.w.type, TensorType::kQ4_0);
  EXPECT_EQ(w.input_projection.w.type, TensorType::kF32);
  EXPECT_EQ(w.mm_input_projection.w.rows, 1536);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tandem
