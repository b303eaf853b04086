// `tandem convert --mmproj`: the vision and audio towers of a synthetic
// Gemma4ForConditionalGeneration checkpoint (HF naming) become one llama.cpp mmproj file. Checked
// against the checkpoint itself (every value after the documented transform, read from the file
// and through tandem's gemma4v loader), against what `tandem mkmodel --mmproj` writes for the same
// configs (keys, key types, tensor names, shapes and dtypes), against the NumPy reference run on
// the HF weights (the encoded soft tokens), and with broken checkpoints. Also `tandem quantize`
// of the result. The audio tower's own checks are in mmproj_audio_convert_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <random>

#include "base/error.h"
#include "base/thread_pool.h"
#include "convert/quantizer.h"
#include "convert/safetensors_test_util.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4v/encoder.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/random_mmproj.h"
#include "gguf/gguf_reader.h"
#include "hf_checkpoint.h"
#include "mmproj_test_util.h"
#include "tensor/dequantize.h"
#include "test_util.h"

namespace tandem::testing {
namespace {

namespace fs = std::filesystem;

// A tower with neither clamp bounds nor standardization, no audio, F32 storage (26B/31B-like).
HfSpec PlainVisionSpec() {
  HfSpec s = E2bLikeSpec();
  s.name = "e2b-plain-vision";
  s.dtype = "F32";
  s.vision.clipped = false;
  s.vision.standardize = false;
  s.audio.present = false;
  return s;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The GGUF shape (ne) of a vision or audio tensor: the patch kernel {p, p, 3, D}, the audio
// depthwise kernel [Da, 1, K] squeezed to {K, Da}, scalars {1}, else the PyTorch shape reversed.
std::vector<uint64_t> ExpectedNe(const HfTensor& t, const Gemma4VisionConfig& c) {
  if (t.mmproj == "v.patch_embd.weight") {
    return {uint64_t(c.patch_size), uint64_t(c.patch_size), 3, uint64_t(c.n_embd)};
  }
  if (EndsWith(t.mmproj, ".conv_dw.weight")) return {t.shape[2], t.shape[0]};
  if (t.shape.empty()) return {1};
  return {t.shape.rbegin(), t.shape.rend()};
}

// The values in GGUF element order: the patch linear [D][p·p·3] over (row, column, channel)
// becomes the kernel [D][3][p][p]; the audio per_dim_scale becomes softplus(x) = ln(1 + e^x);
// everything else keeps its values and order.
std::vector<float> ExpectedValues(const HfTensor& t, const Gemma4VisionConfig& c) {
  if (EndsWith(t.mmproj, ".per_dim_scale.weight")) {
    std::vector<float> out;
    for (float x : t.values) out.push_back(static_cast<float>(std::log(1.0 + std::exp(double(x)))));
    return out;
  }
  if (t.mmproj != "v.patch_embd.weight") return t.values;
  const int p = c.patch_size, d = c.n_embd;
  std::vector<float> out(t.values.size());
  for (int o = 0; o < d; ++o) {
    for (int ch = 0; ch < 3; ++ch) {
      for (int i = 0; i < p; ++i) {
        for (int j = 0; j < p; ++j) {
          out[((size_t(o) * 3 + ch) * p + i) * p + j] =
              t.values[size_t(o) * 3 * p * p + (size_t(i) * p + j) * 3 + ch];
        }
      }
    }
  }
  return out;
}

// Every tensor of the file is a checkpoint tensor after the documented transform: values bitwise
// equal (f32), or equal to the checkpoint value rounded to the stored type (f16 / bf16).
void CheckValues(const Converted& c, const Gemma4VisionConfig& config, TensorType type) {
  const auto f = GgufFile::Open(c.mmproj);
  size_t n = 0;
  for (const HfTensor& t : c.ckpt.tensors) {
    if (t.mmproj.empty()) continue;
    ++n;
    const TensorInfo* info = f->FindTensor(t.mmproj);
    ASSERT_NE(info, nullptr) << t.mmproj;
    const std::vector<uint64_t> ne(info->ne.begin(), info->ne.begin() + info->n_dims);
    EXPECT_EQ(ne, ExpectedNe(t, config)) << t.mmproj;
    const std::vector<float> want = ExpectedValues(t, config);
    const std::vector<float> got = DecodeTensor(*f, *info);
    ASSERT_EQ(got.size(), want.size()) << t.mmproj;
    const std::string stored = info->type == TensorType::kF16    ? "F16"
                               : info->type == TensorType::kBF16 ? "BF16"
                                                                 : "F32";
    if (info->type == TensorType::kQ8_0) continue;  // lossy; covered by the quantize test
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got[i], RoundTo(want[i], stored)) << t.mmproj << " element " << i;
    }
  }
  EXPECT_EQ(f->tensors().size(), n) << "tensors that come from nowhere";
  (void)type;
}

TEST(MmprojConvert, EveryTensorEqualsTheCheckpointAfterTheTransform) {
  for (const HfSpec& spec : {E2bLikeSpec(), PlainVisionSpec()}) {
    for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kBF16}) {
      SCOPED_TRACE(spec.name + " " + std::string(TensorTypeName(type)));
      const Converted c = ConvertWithMmproj(spec, type, std::string(TensorTypeName(type)));
      CheckValues(c, ExpectedVisionConfig(spec), type);
    }
  }
}

// The same values through tandem's gemma4v loader: the config it reads, the clamp bounds of
// every linear (a missing or infinite bound is no bound), the norms, std tensors and the patch
// embedding read as its [D][3·p·p] matrix in (channel, row, column) order.
TEST(MmprojConvert, LoaderReadsTheCheckpointValues) {
  for (const HfSpec& spec : {E2bLikeSpec(), PlainVisionSpec()}) {
    SCOPED_TRACE(spec.name);
    const Converted c = ConvertWithMmproj(spec, TensorType::kF32, "load");
    const auto enc =
        Gemma4VisionEncoder::Load(c.mmproj, {.gelu = VisionGelu::kTanh, .repack = false});
    const Gemma4VisionConfig want = ExpectedVisionConfig(spec);
    const Gemma4VisionConfig& got = enc->config();
    EXPECT_EQ(got.n_embd, want.n_embd);
    EXPECT_EQ(got.n_ff, want.n_ff);
    EXPECT_EQ(got.n_layer, want.n_layer);
    EXPECT_EQ(got.n_head, want.n_head);
    EXPECT_EQ(got.n_head_kv, want.n_head_kv);
    EXPECT_EQ(got.head_dim, want.head_dim);
    EXPECT_EQ(got.patch_size, want.patch_size);
    EXPECT_EQ(got.pooling, want.pooling);
    EXPECT_EQ(got.n_pos, want.n_pos);
    EXPECT_EQ(got.n_embd_text, want.n_embd_text);
    EXPECT_EQ(got.clipped_linears, want.clipped_linears);
    EXPECT_EQ(got.standardize, want.standardize);
    EXPECT_FLOAT_EQ(got.eps, 1e-6f);
    EXPECT_FALSE(got.use_gelu.has_value());  // llama.cpp's converter does not write it

    const Gemma4VisionWeights& w = enc->weights();
    const int p = want.patch_size;
    const HfTensor& patch = ByMmproj(c.ckpt, "v.patch_embd.weight");
    ASSERT_EQ(w.patch_embd.type, TensorType::kF32);
    ASSERT_EQ(w.patch_embd.cols, 3 * p * p);
    const float* kernel = static_cast<const float*>(w.patch_embd.data);
    for (int o = 0; o < want.n_embd; ++o) {
      for (int ch = 0; ch < 3; ++ch) {
        for (int i = 0; i < p; ++i) {
          for (int j = 0; j < p; ++j) {
            ASSERT_EQ(kernel[size_t(o) * 3 * p * p + (ch * p + i) * p + j],
                      patch.values[size_t(o) * 3 * p * p + (i * p + j) * 3 + ch])
                << o << " " << ch << " " << i << " " << j;
          }
        }
      }
    }
    for (int l = 0; l < want.n_layer; ++l) {
      const Gemma4VisionLayerWeights& lw = w.layers[l];
      const std::string blk = "v.blk." + std::to_string(l) + ".";
      EXPECT_EQ(lw.ln1, ByMmproj(c.ckpt, blk + "ln1.weight").values);
      EXPECT_EQ(lw.attn_k_norm, ByMmproj(c.ckpt, blk + "attn_k_norm.weight").values);
      EXPECT_EQ(lw.ffn_post_norm, ByMmproj(c.ckpt, blk + "ffn_post_norm.weight").values);
      const ClippedLinear* linears[7] = {&lw.attn_q,   &lw.attn_k, &lw.attn_v,  &lw.attn_out,
                                         &lw.ffn_gate, &lw.ffn_up, &lw.ffn_down};
      const char* names[7] = {"attn_q",   "attn_k", "attn_v",  "attn_out",
                              "ffn_gate", "ffn_up", "ffn_down"};
      for (int k = 0; k < 7; ++k) {
        const std::string base = blk + names[k];
        const ClippedLinear& lin = *linears[k];
        if (!want.clipped_linears) {
          EXPECT_FALSE(lin.ClipsInput() || lin.ClipsOutput()) << base;
          continue;
        }
        EXPECT_EQ(lin.in_min, ByMmproj(c.ckpt, base + ".input_min").values[0]) << base;
        EXPECT_EQ(lin.in_max, ByMmproj(c.ckpt, base + ".input_max").values[0]) << base;
        EXPECT_EQ(lin.out_min, ByMmproj(c.ckpt, base + ".output_min").values[0]) << base;
        EXPECT_EQ(lin.out_max, ByMmproj(c.ckpt, base + ".output_max").values[0]) << base;
      }
    }
    if (want.clipped_linears) {  // the checkpoint's one bound at transformers' initial +inf
      EXPECT_TRUE(std::isinf(w.layers.back().ffn_down.in_max));
    }
    if (want.standardize) {
      EXPECT_EQ(w.std_bias, ByMmproj(c.ckpt, "v.std_bias").values);
      EXPECT_EQ(w.std_scale, ByMmproj(c.ckpt, "v.std_scale").values);
    } else {
      EXPECT_TRUE(w.std_bias.empty() && w.std_scale.empty());
    }
  }
}

// Keys (with their GGUF types and values, general.name aside) and tensors (names, order, shapes,
// dtypes) equal what the random-weight writer of `tandem mkmodel --mmproj` writes for the same
// configs and --type: both towers in one file for the E2B-like checkpoint, vision only for the
// other.
TEST(MmprojConvert, LayoutEqualsMkmodelForTheSameConfig) {
  for (const HfSpec& spec : {E2bLikeSpec(), PlainVisionSpec()}) {
    for (TensorType type :
         {TensorType::kF32, TensorType::kF16, TensorType::kBF16, TensorType::kQ8_0}) {
      SCOPED_TRACE(spec.name + " " + std::string(TensorTypeName(type)));
      const Converted c = ConvertWithMmproj(spec, type, std::string(TensorTypeName(type)));
      const std::string random = fs::path(c.mmproj).parent_path() / "random.gguf";
      const Gemma4VisionConfig vision = ExpectedVisionConfig(spec);
      const Gemma4AudioConfig audio = ExpectedAudioConfig(spec);
      WriteRandomMmproj(&vision, spec.audio.present ? &audio : nullptr, {.weight_type = type},
                        random);
      const auto a = GgufFile::Open(c.mmproj);
      const auto b = GgufFile::Open(random);
      std::map<std::string, const GgufValue*> ka, kb;
      for (const GgufKv& kv : a->metadata().entries()) ka[kv.key] = &kv.value;
      for (const GgufKv& kv : b->metadata().entries()) kb[kv.key] = &kv.value;
      ASSERT_EQ(ka.size(), kb.size());
      for (const auto& [key, value] : ka) {
        ASSERT_EQ(kb.count(key), 1u) << key;
        EXPECT_EQ(value->type(), kb[key]->type()) << key;
        if (key != "general.name") {
          EXPECT_TRUE(*value == *kb[key]) << key;
        }
      }
      ASSERT_EQ(a->tensors().size(), b->tensors().size());
      for (size_t i = 0; i < a->tensors().size(); ++i) {
        const TensorInfo& x = a->tensors()[i];
        const TensorInfo& y = b->tensors()[i];
        EXPECT_EQ(x.name, y.name);
        EXPECT_EQ(x.type, y.type) << x.name;
        EXPECT_EQ(x.n_dims, y.n_dims) << x.name;
        EXPECT_EQ(x.ne, y.ne) << x.name;
      }
    }
  }
}

// Soft tokens of an image encoded by tandem from the converted file equal the float64 NumPy
// reference run straight on the HF weights (transformers' patch linear, tanh GELU).
TEST(MmprojConvert, EncodedImageMatchesTheReferenceOnTheHfWeights) {
  for (const HfSpec& spec : {E2bLikeSpec(), PlainVisionSpec()}) {
    SCOPED_TRACE(spec.name);
    const Converted c = ConvertWithMmproj(spec, TensorType::kF32, "encode");
    const auto enc = Gemma4VisionEncoder::Load(c.mmproj, {.gelu = VisionGelu::kTanh});
    const int width = 96, height = 144;  // non-square: row and column tables not swapped
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<float> rgb(size_t(width) * height * 3);
    for (float& v : rgb) v = unit(rng);
    ThreadPool pool(2);
    const std::vector<float> got = enc->Encode(rgb.data(), width, height, pool);
    const auto ref = HfVisionReference(c.hf, rgb, width, height);
    if (!ref) GTEST_SKIP() << "NumPy not available";
    ExpectCloseToReference(got, *ref, 1e-4);
  }
}

// `--clip-use-gelu` adds clip.use_gelu = true, which makes llama.cpp (and tandem's kFromFile)
// run the tanh GELU.
TEST(MmprojConvert, ClipUseGeluIsWritten) {
  const HfSpec spec = PlainVisionSpec();
  const HfCheckpoint ckpt = MakeHfCheckpoint(spec);
  const std::string dir = ScratchDir("gelu");
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  ConvertOptions o = MmprojOptions(dir + "/hf", dir + "/t.gguf", dir + "/m.gguf", TensorType::kF32);
  o.clip_use_gelu = true;
  ConvertHfToGguf(o);
  const auto enc = Gemma4VisionEncoder::Load(dir + "/m.gguf", {.gelu = VisionGelu::kFromFile});
  EXPECT_EQ(enc->activation(), VisionActivation::kGeluTanh);
  o.mmproj_path.clear();
  EXPECT_THROW(ConvertHfToGguf(o), Error);
}

// Broken vision towers fail before anything is written, naming the tensor and the file.
constexpr char kLayer1Down[] = "model.vision_tower.encoder.layers.1.mlp.down_proj.linear.weight";
constexpr char kLayer0K[] = "model.vision_tower.encoder.layers.0.self_attn.k_proj.linear.weight";
constexpr char kPatch[] = "model.vision_tower.patch_embedder.input_proj.weight";

TEST(MmprojConvertErrors, MissingVisionTensorIsNamed) {
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      std::erase_if(c.tensors,
                                    [](const HfTensor& t) { return t.name == kLayer1Down; });
                    },
                    ErrorKind::kNotFound, {"/hf", "v.blk.1.ffn_down.weight", kLayer1Down});
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      std::erase_if(c.tensors,
                                    [](const HfTensor& t) { return t.mmproj == "v.std_scale"; });
                    },
                    ErrorKind::kNotFound, {"/hf", "v.std_scale", "model.vision_tower.std_scale"});
}

TEST(MmprojConvertErrors, WrongShapeIsNamedWithItsFile) {
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      HfTensor& t = Named(c, kLayer0K);
                      t.shape = {16, 32};
                      t.values.resize(16 * 32);
                    },
                    ErrorKind::kCorrupt,
                    {"/hf/model.safetensors", kLayer0K, "v.blk.0.attn_k.weight", "[16, 32]",
                     "expected [32, 32]"});
  // The patch linear in another layout (e.g. already a conv kernel [D, 3, p, p]).
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      Named(c, kPatch).shape = {32, 3, 16, 16};
                    },
                    ErrorKind::kCorrupt, {"/hf/model.safetensors", kPatch, "expected [32, 768]"});
  ExpectMmprojError(
      E2bLikeSpec(),
      [](HfCheckpoint& c) {
        HfTensor& t = Named(c, "model.vision_tower.encoder.layers.0.self_attn.q_proj.input_min");
        t.shape = {2};
        t.values = {-1.0f, -2.0f};
      },
      ErrorKind::kCorrupt, {"self_attn.q_proj.input_min", "v.blk.0.attn_q.input_min"});
}

TEST(MmprojConvertErrors, UnknownOrUnexpectedVisionNames) {
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      HfTensor t = Named(c, kLayer0K);
                      t.name = "model.vision_tower.encoder.layers.0.self_attn.extra_proj.weight";
                      c.tensors.push_back(t);
                    },
                    ErrorKind::kUnsupported, {"/hf", "self_attn.extra_proj.weight"});
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      HfTensor t = Named(c, kLayer0K);
                      t.name = "model.vision_tower.encoder.layers.5.self_attn.k_proj.linear.weight";
                      c.tensors.push_back(t);
                    },
                    ErrorKind::kCorrupt,
                    {"/hf", "layers.5.self_attn.k_proj", "num_hidden_layers 2"});
  // Bounds in a checkpoint whose config says the linears are not clipped.
  ExpectMmprojError(
      E2bLikeSpec(),
      [](HfCheckpoint& c) { c.config["vision_config"]["use_clipped_linears"] = false; },
      ErrorKind::kCorrupt, {"input_min", "use_clipped_linears is false"});
}

TEST(MmprojConvertErrors, CheckpointWithoutVisionTower) {
  ExpectMmprojError(Dense31bLikeSpec(), nullptr, ErrorKind::kNotFound, {"no vision_config"});
  ExpectMmprojError(
      E2bLikeSpec(),
      [](HfCheckpoint& c) { c.config["vision_config"]["hidden_activation"] = "gelu"; },
      ErrorKind::kUnsupported, {"vision_config.hidden_activation", "gelu_pytorch_tanh only"});
}

TEST(MmprojConvertErrors, NanInAClampBoundIsNamed) {
  HfCheckpoint ckpt = MakeHfCheckpoint(E2bLikeSpec());
  Named(ckpt, "model.vision_tower.encoder.layers.1.mlp.up_proj.output_max").values[0] = NAN;
  const std::string dir = ScratchDir("nan");
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  try {
    ConvertHfToGguf(MmprojOptions(dir + "/hf", dir + "/t.gguf", dir + "/m.gguf", TensorType::kF32));
    ADD_FAILURE() << "a NaN bound was converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("v.blk.1.ffn_up.output_max"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/m.gguf"));
}

// `tandem quantize` of an mmproj follows the converter's dtype rules: quantizing the f32 file to
// F16 / BF16 / Q8_0 gives the tensors `convert --type` writes, byte for byte; other presets are
// refused.
TEST(MmprojQuantize, FollowsTheConverterDtypeRules) {
  const HfSpec spec = E2bLikeSpec();
  const Converted f32 = ConvertWithMmproj(spec, TensorType::kF32, "q-f32");
  const std::pair<QuantPreset, TensorType> cases[] = {{QuantPreset::kF16, TensorType::kF16},
                                                      {QuantPreset::kBF16, TensorType::kBF16},
                                                      {QuantPreset::kQ8_0, TensorType::kQ8_0}};
  for (const auto& [preset, type] : cases) {
    SCOPED_TRACE(TensorTypeName(type));
    const Converted direct = ConvertWithMmproj(spec, type, std::string(TensorTypeName(type)));
    const std::string out = fs::path(f32.mmproj).parent_path() /
                            ("quantized-" + std::string(TensorTypeName(type)) + ".gguf");
    QuantizeOptions q;
    q.preset = preset;
    q.progress = false;
    QuantizeGguf(f32.mmproj, out, q);
    const auto a = GgufFile::Open(out);
    const auto b = GgufFile::Open(direct.mmproj);
    EXPECT_EQ(a->metadata().GetU32("general.file_type"), b->metadata().GetU32("general.file_type"));
    ASSERT_EQ(a->tensors().size(), b->tensors().size());
    for (size_t i = 0; i < a->tensors().size(); ++i) {
      const TensorInfo& x = a->tensors()[i];
      const TensorInfo& y = b->tensors()[i];
      ASSERT_EQ(x.name, y.name);
      EXPECT_EQ(x.type, y.type) << x.name;
      const auto bx = a->TensorBytes(x), by = b->TensorBytes(y);
      EXPECT_TRUE(bx.size() == by.size() && std::memcmp(bx.data(), by.data(), bx.size()) == 0)
          << x.name;
    }
  }
  QuantizeOptions q;
  q.preset = QuantPreset::kQ4_K_M;
  q.progress = false;
  try {
    QuantizeGguf(f32.mmproj, f32.mmproj + ".q4", q);
    ADD_FAILURE() << "Q4_K_M of an mmproj was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("F16, BF16 or Q8_0"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(f32.mmproj + ".q4"));
}

// A file with both towers (what `tandem mkmodel --mmproj` writes for the E-series) quantizes by
// each tower's converter rules: the f32 file quantized equals the random writer's output for that
// type, byte for byte (the writer quantizes the same values with the same rules).
TEST(MmprojQuantize, BothTowersFollowTheirConverterDtypeRules) {
  const Gemma4VisionConfig vision = Gemma4VisionPreset("tiny");
  const Gemma4AudioConfig audio = Gemma4AudioPreset("tiny");
  const std::string dir = ::testing::TempDir();
  const std::string f32 = dir + "/both-f32.gguf";
  WriteRandomMmproj(&vision, &audio, {}, f32);
  const std::pair<QuantPreset, TensorType> cases[] = {{QuantPreset::kF16, TensorType::kF16},
                                                      {QuantPreset::kBF16, TensorType::kBF16},
                                                      {QuantPreset::kQ8_0, TensorType::kQ8_0}};
  for (const auto& [preset, type] : cases) {
    SCOPED_TRACE(TensorTypeName(type));
    const std::string direct = dir + "/both-direct.gguf", out = dir + "/both-quantized.gguf";
    WriteRandomMmproj(&vision, &audio, {.weight_type = type}, direct);
    QuantizeOptions q;
    q.preset = preset;
    q.progress = false;
    QuantizeGguf(f32, out, q);
    const auto a = GgufFile::Open(out);
    const auto b = GgufFile::Open(direct);
    ASSERT_EQ(a->tensors().size(), b->tensors().size());
    for (size_t i = 0; i < a->tensors().size(); ++i) {
      const TensorInfo& x = a->tensors()[i];
      const TensorInfo& y = b->tensors()[i];
      ASSERT_EQ(x.name, y.name);
      EXPECT_EQ(x.type, y.type) << x.name;
      const auto bx = a->TensorBytes(x), by = b->TensorBytes(y);
      EXPECT_TRUE(bx.size() == by.size() && std::memcmp(bx.data(), by.data(), bx.size()) == 0)
          << x.name;
    }
  }
}

}  // namespace
}  // namespace tandem::testing
