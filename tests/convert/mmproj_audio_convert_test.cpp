// `tandem convert --mmproj` of a checkpoint with an audio tower (E2B/E4B-like): the gemma4a tower
// joins the vision tower in the one mmproj file. The values of every tensor and the layout are
// checked for both towers in mmproj_convert_test.cpp; here: tandem's gemma4a loader reads the
// checkpoint's values (the transforms and the name traps), the encoded soft tokens equal the
// NumPy reference run on the HF weights, the file describes both encoders, and broken audio
// towers and audio configs are errors naming the tensor or field.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encoders/gemma4a/encoder.h"
#include "encoders/mmproj_file.h"
#include "gguf/gguf_reader.h"
#include "hf_checkpoint.h"
#include "mmproj_test_util.h"
#include "test_util.h"

namespace tandem::testing {
namespace {

namespace fs = std::filesystem;

float Softplus(float x) {
  return static_cast<float>(std::log(1.0 + std::exp(double(x))));
}

// `frames` log-mel frames [frames][128] of a fixed pseudo-random recording.
std::vector<float> TestMel(int frames, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-4.0f, 2.0f);
  std::vector<float> mel(size_t(frames) * 128);
  for (float& v : mel) v = value(rng);
  return mel;
}

// The loader's config, and the values it binds, are the checkpoint's: per_dim_scale after
// softplus, the depthwise kernel squeezed, the conv module's pre-norm (HF pre_layer_norm) as
// conv_norm and its post-conv norm (HF conv_norm) as norm_conv, every clamp bound (one -inf).
TEST(MmprojAudioConvert, LoaderReadsTheCheckpointValues) {
  const HfSpec spec = E2bLikeSpec();
  const Converted c = ConvertWithMmproj(spec, TensorType::kF32, "audio-load");
  const auto enc = Gemma4AudioEncoder::Load(c.mmproj, {.repack = false});
  const Gemma4AudioConfig want = ExpectedAudioConfig(spec);
  const Gemma4AudioConfig& got = enc->config();
  EXPECT_EQ(got.n_embd, want.n_embd);
  EXPECT_EQ(got.n_ff, want.n_ff);
  EXPECT_EQ(got.n_layer, want.n_layer);
  EXPECT_EQ(got.n_head, want.n_head);
  EXPECT_EQ(got.n_mel, want.n_mel);
  EXPECT_EQ(got.n_embd_text, want.n_embd_text);
  EXPECT_EQ(got.sub_channels0, want.sub_channels0);
  EXPECT_EQ(got.sub_channels1, want.sub_channels1);
  EXPECT_EQ(got.n_out, want.n_out);
  EXPECT_TRUE(got.clipped_linears);
  EXPECT_FLOAT_EQ(got.eps, 1e-6f);

  const Gemma4AudioWeights& w = enc->weights();
  EXPECT_EQ(w.conv0_norm, ByMmproj(c.ckpt, "a.conv1d.0.norm.weight").values);
  EXPECT_EQ(w.output_bias, ByMmproj(c.ckpt, "a.pre_encode.out.bias").values);
  const std::string tower = "model.audio_tower.layers.";
  for (int l = 0; l < want.n_layer; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const Gemma4AudioLayerWeights& lw = w.layers[l];
    const HfCheckpoint& ckpt = c.ckpt;
    const std::string hf = tower + std::to_string(l) + ".";
    const std::vector<float>& raw = Named(ckpt, hf + "self_attn.per_dim_scale").values;
    ASSERT_EQ(lw.per_dim_scale.size(), raw.size());
    for (size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(lw.per_dim_scale[i], Softplus(raw[i])) << i;
    EXPECT_EQ(lw.conv_dw, Named(ckpt, hf + "lconv1d.depthwise_conv1d.weight").values);
    EXPECT_EQ(lw.conv_norm, Named(ckpt, hf + "lconv1d.pre_layer_norm.weight").values);
    EXPECT_EQ(lw.norm_conv, Named(ckpt, hf + "lconv1d.conv_norm.weight").values);
    EXPECT_EQ(lw.ffn_norm, Named(ckpt, hf + "feed_forward1.pre_layer_norm.weight").values);
    EXPECT_EQ(lw.ffn_norm_1, Named(ckpt, hf + "feed_forward2.pre_layer_norm.weight").values);
    EXPECT_EQ(lw.attn_pre_norm, Named(ckpt, hf + "norm_pre_attn.weight").values);
    EXPECT_EQ(lw.ln2, Named(ckpt, hf + "norm_out.weight").values);
    const std::pair<const ClippedLinear*, const char*> linears[] = {
        {&lw.ffn_up, "feed_forward1.ffw_layer_1"},
        {&lw.ffn_down_1, "feed_forward2.ffw_layer_2"},
        {&lw.attn_out, "self_attn.post"},
        {&lw.conv_pw1, "lconv1d.linear_start"},
        {&lw.conv_pw2, "lconv1d.linear_end"}};
    for (const auto& [lin, name] : linears) {
      const std::string base = hf + name;
      EXPECT_EQ(lin->in_min, Named(ckpt, base + ".input_min").values[0]) << base;
      EXPECT_EQ(lin->in_max, Named(ckpt, base + ".input_max").values[0]) << base;
      EXPECT_EQ(lin->out_min, Named(ckpt, base + ".output_min").values[0]) << base;
      EXPECT_EQ(lin->out_max, Named(ckpt, base + ".output_max").values[0]) << base;
    }
  }
  EXPECT_TRUE(std::isinf(w.layers[0].conv_pw2.out_min));  // transformers' initial -inf
}

// Soft tokens of one piece encoded by tandem from the converted file equal the float64 NumPy
// reference run straight on the HF weights (its own name map, softplus and squeeze).
TEST(MmprojAudioConvert, EncodedAudioMatchesTheReferenceOnTheHfWeights) {
  const HfSpec spec = E2bLikeSpec();
  const Converted c = ConvertWithMmproj(spec, TensorType::kF32, "audio-encode");
  const auto enc = Gemma4AudioEncoder::Load(c.mmproj);
  const int frames = 101;  // 26 tokens: three attention blocks, the last one partial
  const std::vector<float> mel = TestMel(frames, 5);
  ThreadPool pool(2);
  const Gemma4AudioEncoder::Mel piece{mel.data(), frames};
  const std::vector<float> got = enc->Encode({&piece, 1}, pool);
  ASSERT_EQ(got.size(), size_t(Gemma4AudioEncoder::Tokens(frames)) * spec.hidden);
  const auto ref = HfAudioReference(c.hf, mel, frames);
  if (!ref) GTEST_SKIP() << "NumPy not available";
  ExpectCloseToReference(got, *ref, 1e-4);
}

// The file names both encoders (what `tandem inspect` prints), the summary counts the audio
// tensors, and the text GGUF is the one a conversion without --mmproj writes. A checkpoint
// without an audio_config gives a vision-only file.
TEST(MmprojAudioConvert, OneFileHoldsBothEncoders) {
  const HfSpec spec = E2bLikeSpec();
  const Converted c = ConvertWithMmproj(spec, TensorType::kF16, "both");
  EXPECT_EQ(MmprojFile::Open(c.mmproj)->Describe(), "vision gemma4v, audio gemma4a");
  size_t audio = 0, all = 0;
  for (const HfTensor& t : c.ckpt.tensors) {
    all += t.mmproj.empty() ? 0 : 1;
    audio += t.mmproj.rfind("a.", 0) == 0 || t.mmproj.rfind("mm.a.", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(audio, 5 + 2 * (22 + 40) + 3u);  // tower-wide, per layer (40 bounds), head
  EXPECT_EQ(c.summary.n_mmproj_audio_tensors, audio);
  EXPECT_EQ(c.summary.n_mmproj_tensors, all);
  const std::string plain = fs::path(c.text).parent_path() / "plain.gguf";
  Convert(c.hf, plain, TensorType::kF16, 2);
  EXPECT_EQ(ReadAll(plain), ReadAll(c.text));

  HfSpec vision_only = spec;
  vision_only.name = "e2b-no-audio";
  vision_only.audio.present = false;
  const Converted v = ConvertWithMmproj(vision_only, TensorType::kF16, "vision-only");
  EXPECT_EQ(MmprojFile::Open(v.mmproj)->Describe(), "vision gemma4v");
  EXPECT_EQ(v.summary.n_mmproj_audio_tensors, 0u);
}

// Buffers transformers does not save (the relative-position timescales, the soft-cap constant)
// are left out should a checkpoint carry them.
TEST(MmprojAudioConvert, NonPersistentBuffersAreDropped) {
  HfCheckpoint ckpt = MakeHfCheckpoint(E2bLikeSpec());
  HfTensor t = Named(ckpt, "model.audio_tower.layers.0.self_attn.per_dim_scale");
  t.mmproj.clear();
  t.name = "model.audio_tower.rel_pos_enc.inv_timescales";
  ckpt.tensors.push_back(t);
  t.name = "model.audio_tower.layers.1.self_attn.softcap";
  t.shape = {};
  t.values.resize(1);
  ckpt.tensors.push_back(t);
  const std::string dir = ScratchDir("buffers");
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  const ConvertSummary s = ConvertHfToGguf(
      MmprojOptions(dir + "/hf", dir + "/t.gguf", dir + "/m.gguf", TensorType::kF32));
  const auto f = GgufFile::Open(dir + "/m.gguf");
  size_t mapped = 0;
  for (const HfTensor& x : ckpt.tensors) mapped += x.mmproj.empty() ? 0 : 1;
  EXPECT_EQ(f->tensors().size(), mapped);
  EXPECT_EQ(s.n_mmproj_tensors, mapped);
  for (const TensorInfo& info : f->tensors()) {
    EXPECT_EQ(info.name.find("timescales"), std::string::npos);
    EXPECT_EQ(info.name.find("softcap"), std::string::npos);
  }
}

constexpr char kDepthwise1[] = "model.audio_tower.layers.1.lconv1d.depthwise_conv1d.weight";
constexpr char kInputProj[] =
    "model.audio_tower.subsample_conv_projection.input_proj_linear.weight";

void Erase(HfCheckpoint& c, const std::string& name) {
  std::erase_if(c.tensors, [&name](const HfTensor& t) { return t.name == name; });
}

TEST(MmprojAudioConvertErrors, MissingAudioTensorIsNamed) {
  ExpectMmprojError(E2bLikeSpec(), [](HfCheckpoint& c) { Erase(c, kDepthwise1); },
                    ErrorKind::kNotFound, {"/hf", "audio", "a.blk.1.conv_dw.weight", kDepthwise1});
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) { Erase(c, "model.audio_tower.layers.0.norm_out.weight"); },
                    ErrorKind::kNotFound,
                    {"a.blk.0.ln2.weight", "model.audio_tower.layers.0.norm_out.weight"});
  ExpectMmprojError(
      E2bLikeSpec(),
      [](HfCheckpoint& c) { Erase(c, "model.embed_audio.embedding_projection.weight"); },
      ErrorKind::kNotFound,
      {"mm.a.input_projection.weight", "model.embed_audio.embedding_projection.weight"});
}

TEST(MmprojAudioConvertErrors, WrongShapeIsNamedWithItsFile) {
  // The depthwise kernel already squeezed to [Da, K].
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      Named(c, kDepthwise1).shape = {32, 5};
                    },
                    ErrorKind::kCorrupt,
                    {"/hf/model.safetensors", kDepthwise1, "a.blk.1.conv_dw.weight", "[32, 5]",
                     "expected [32, 1, 5] for this audio_config"});
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      HfTensor& t = Named(c, kInputProj);
                      t.shape = {32, 64};
                      t.values.resize(32 * 64);
                    },
                    ErrorKind::kCorrupt,
                    {kInputProj, "a.input_projection.weight", "expected [32, 128]"});
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      HfTensor& t = Named(c, "model.audio_tower.layers.0.self_attn.per_dim_scale");
                      t.shape = {32};
                      t.values.resize(32);
                    },
                    ErrorKind::kCorrupt, {"a.blk.0.per_dim_scale.weight", "expected [16]"});
}

TEST(MmprojAudioConvertErrors, UnknownOrUnexpectedAudioNames) {
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      HfTensor t = Named(c, kDepthwise1);
                      t.name = "model.audio_tower.layers.1.lconv1d.depthwise_conv2d.weight";
                      c.tensors.push_back(t);
                    },
                    ErrorKind::kUnsupported, {"/hf", "lconv1d.depthwise_conv2d.weight"});
  ExpectMmprojError(E2bLikeSpec(),
                    [](HfCheckpoint& c) {
                      HfTensor t = Named(c, kDepthwise1);
                      t.name = "model.audio_tower.layers.2.lconv1d.depthwise_conv1d.weight";
                      c.tensors.push_back(t);
                    },
                    ErrorKind::kCorrupt, {"/hf", "a.blk.2.conv_dw.weight", "num_hidden_layers 2"});
  ExpectMmprojError(
      E2bLikeSpec(),
      [](HfCheckpoint& c) { c.config["audio_config"]["use_clipped_linears"] = false; },
      ErrorKind::kCorrupt, {"a.blk.", "audio_config.use_clipped_linears is false"});
  // Audio tensors in a checkpoint whose config.json has no audio tower.
  ExpectMmprojError(E2bLikeSpec(), [](HfCheckpoint& c) { c.config.erase("audio_config"); },
                    ErrorKind::kCorrupt, {"/hf", "audio tower tensors", "no audio_config"});
}

// audio_config values the mmproj file cannot carry (llama.cpp fixes them) are refused, naming
// the field.
TEST(MmprojAudioConvertErrors, AudioConfigValuesTheFileCannotCarry) {
  const std::pair<const char*, nlohmann::json> cases[] = {
      {"hidden_act", "gelu"},         {"conv_kernel_size", 3},       {"attention_chunk_size", 16},
      {"attention_context_left", 25}, {"attention_logit_cap", 30.0}, {"residual_weight", 1.0}};
  for (const auto& edit : cases) {
    const char* field = edit.first;
    const nlohmann::json& value = edit.second;
    SCOPED_TRACE(field);
    ExpectMmprojError(
        E2bLikeSpec(), [&](HfCheckpoint& c) { c.config["audio_config"][field] = value; },
        ErrorKind::kUnsupported, {"config.json", std::string("audio_config.") + field});
  }
  ExpectMmprojError(
      E2bLikeSpec(),
      [](HfCheckpoint& c) { c.config["audio_config"]["subsampling_conv_channels"] = {128}; },
      ErrorKind::kCorrupt, {"audio_config.subsampling_conv_channels", "list of 2"});
}

TEST(MmprojAudioConvertErrors, NanInPerDimScaleIsNamed) {
  HfCheckpoint ckpt = MakeHfCheckpoint(E2bLikeSpec());
  Named(ckpt, "model.audio_tower.layers.1.self_attn.per_dim_scale").values[3] = NAN;
  const std::string dir = ScratchDir("nan");
  WriteHfCheckpoint(ckpt, dir + "/hf", 1);
  try {
    ConvertHfToGguf(MmprojOptions(dir + "/hf", dir + "/t.gguf", dir + "/m.gguf", TensorType::kF32));
    ADD_FAILURE() << "a NaN per_dim_scale was converted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kCorrupt);
    EXPECT_NE(std::string(e.what()).find("a.blk.1.per_dim_scale.weight"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir + "/m.gguf"));
}

}  // namespace
}  // namespace tandem::testing
