// Gemma4VisionEncoder: a hand-checkable tower (identity layers) against a float64 computation of
// patchify / positions / pooling / projection written from the format description; bitwise
// invariance to the thread count and to batching; the weight types; the options.
#include "encoders/gemma4v/encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "base/thread_pool.h"
#include "encoders/encoders_test_util.h"
#include "encoders/gemma4v/encoding.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/gemma4v/random_mmproj.h"
#include "encoders/mmproj_keys.h"
#include "tensor/dequantize.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::F32Bytes;
using testing::RewriteGguf;
using testing::TempPath;

// Pixels in [0, 1], HWC, deterministic.
std::vector<float> Pixels(int width, int height, uint32_t seed) {
  std::vector<float> px(static_cast<size_t>(width) * height * 3);
  uint32_t s = seed * 2654435761u + 1;
  for (float& v : px) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.0f;
  }
  return px;
}

std::string WriteTiny(const std::string& name, TensorType type) {
  RandomMmprojOptions o;
  o.weight_type = type;
  const std::string path = TempPath(name);
  WriteRandomGemma4VisionMmproj(Gemma4VisionPreset("tiny"), o, path);
  return path;
}

bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> TensorValues(const GgufFile& f, const char* name) {
  const TensorInfo* t = f.FindTensor(name);
  std::vector<float> v(t->n_elements());
  DequantizeRow(t->type, f.TensorData(*t), v.data(), static_cast<int64_t>(v.size()));
  return v;
}

// Feature j of the hand-checkable patch embedding reads one pixel of the patch: channel j % 3,
// row 5j % 16, column 7j % 16.
int PickChannel(int j) {
  return j % 3;
}
int PickRow(int j) {
  return (5 * j) % 16;
}
int PickCol(int j) {
  return (7 * j) % 16;
}

TEST(Gemma4VisionEncoder, IdentityLayersGiveThePooledProjectedPatches) {
  // Post-attention and post-FFN gains of 0 make every layer add exactly zero, so the output is
  // W_mm · RMSNorm((avgpool3x3(Wpatch · (2x - 1) + Tx[col] + Ty[row]) · sqrt(Dv) - b) · s).
  Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
  c.n_layer = 1;
  const std::string src = TempPath("venc_identity_src.gguf");
  WriteRandomGemma4VisionMmproj(c, {}, src);
  const std::string path = TempPath("venc_identity.gguf");
  const int D = c.n_embd;
  RewriteGguf(src, path, nullptr, [&](GgufWriter& w, const TensorInfo& t) {
    if (t.name == "v.blk.0.attn_post_norm.weight" || t.name == "v.blk.0.ffn_post_norm.weight") {
      w.AddTensor(t.name, TensorType::kF32, std::vector<uint64_t>{uint64_t(D)},
                  F32Bytes(std::vector<float>(D, 0.0f)));
      return true;
    }
    if (t.name == "v.patch_embd.weight") {  // {16, 16, 3, D}: [j][channel][row][col]
      std::vector<float> k(16 * 16 * 3 * D, 0.0f);
      for (int j = 0; j < D; ++j) {
        k[((j * 3 + PickChannel(j)) * 16 + PickRow(j)) * 16 + PickCol(j)] = 1.0f;
      }
      w.AddTensor(t.name, TensorType::kF32, std::vector<uint64_t>{16, 16, 3, uint64_t(D)},
                  F32Bytes(k));
      return true;
    }
    return false;
  });
  auto enc = Gemma4VisionEncoder::Load(path);
  auto file = GgufFile::Open(path);
  const std::vector<float> pos = TensorValues(*file, "v.position_embd.weight");  // [2][S][D]
  const std::vector<float> bias = TensorValues(*file, "v.std_bias");
  const std::vector<float> scale = TensorValues(*file, "v.std_scale");
  const std::vector<float> proj = TensorValues(*file, "mm.input_projection.weight");  // [Dt][D]
  const int S = c.n_pos, Dt = c.n_embd_text;

  const int W = 96, H = 144;  // 6 x 9 patches -> 2 x 3 tokens: rows and columns not swappable
  const std::vector<float> px = Pixels(W, H, 7);
  ThreadPool pool(2);
  const std::vector<float> got = enc->Encode(px.data(), W, H, pool);
  ASSERT_EQ(got.size(), static_cast<size_t>(6 * Dt));

  double worst = 0;
  for (int tr = 0; tr < 3; ++tr) {
    for (int tc = 0; tc < 2; ++tc) {
      std::vector<double> g(D, 0.0);
      for (int dy = 0; dy < 3; ++dy) {
        for (int dx = 0; dx < 3; ++dx) {
          const int row = tr * 3 + dy, col = tc * 3 + dx;
          for (int j = 0; j < D; ++j) {
            const int y = row * 16 + PickRow(j), x = col * 16 + PickCol(j);
            const double pixel = px[(static_cast<size_t>(y) * W + x) * 3 + PickChannel(j)];
            g[j] += 2.0 * pixel - 1.0 + pos[static_cast<size_t>(col) * D + j] +
                    pos[(static_cast<size_t>(S) + row) * D + j];
          }
        }
      }
      double ss = 0;
      for (int j = 0; j < D; ++j) {
        g[j] = (g[j] / 9.0 * std::sqrt(double(D)) - bias[j]) * scale[j];
        ss += g[j] * g[j];
      }
      const double inv = 1.0 / std::sqrt(ss / D + 1e-6);
      const int token = tr * 2 + tc;  // row-major over the pooled grid
      for (int o = 0; o < Dt; ++o) {
        double want = 0;
        for (int j = 0; j < D; ++j) want += proj[static_cast<size_t>(o) * D + j] * g[j] * inv;
        worst = std::max(worst, std::abs(want - got[static_cast<size_t>(token) * Dt + o]));
      }
    }
  }
  EXPECT_LT(worst, 2e-5) << "largest difference from the float64 computation";
}

struct Outputs {
  std::vector<std::vector<float>> alone_1t, alone_2t, batch;
};

Outputs RunInvariance(const Gemma4VisionEncoder& enc) {
  // 96x144 (54 patches), 48x48 (9), 288x240 (270: more than one chunk of 256 rows).
  const int sizes[3][2] = {{96, 144}, {48, 48}, {288, 240}};
  std::vector<std::vector<float>> px;
  for (int i = 0; i < 3; ++i) px.push_back(Pixels(sizes[i][0], sizes[i][1], 11 + i));
  Outputs o;
  ThreadPool one(1), two(2);
  for (int i = 0; i < 3; ++i) {
    o.alone_1t.push_back(enc.Encode(px[i].data(), sizes[i][0], sizes[i][1], one));
    o.alone_2t.push_back(enc.Encode(px[i].data(), sizes[i][0], sizes[i][1], two));
  }
  // Batched in another order.
  const Gemma4VisionEncoder::Image images[3] = {{px[2].data(), sizes[2][0], sizes[2][1]},
                                                {px[0].data(), sizes[0][0], sizes[0][1]},
                                                {px[1].data(), sizes[1][0], sizes[1][1]}};
  std::vector<std::vector<float>> b = enc.EncodeBatch(images, two);
  o.batch = {b[1], b[2], b[0]};
  return o;
}

void ExpectInvariant(const std::string& path) {
  auto enc = Gemma4VisionEncoder::Load(path);
  const Outputs o = RunInvariance(*enc);
  const int tokens[3] = {6, 1, 30};
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(o.alone_1t[i].size(), static_cast<size_t>(tokens[i] * enc->n_embd_out()));
    EXPECT_TRUE(BitwiseEqual(o.alone_1t[i], o.alone_2t[i])) << path << " image " << i;
    EXPECT_TRUE(BitwiseEqual(o.alone_1t[i], o.batch[i])) << path << " image " << i;
    double ss = 0;
    for (float v : o.alone_1t[i]) {
      ASSERT_TRUE(std::isfinite(v));
      ss += double(v) * v;
    }
    const double rms = std::sqrt(ss / o.alone_1t[i].size());
    EXPECT_GT(rms, 0.2) << "activations should stay O(1)";
    EXPECT_LT(rms, 5.0) << "activations should stay O(1)";
  }
}

TEST(Gemma4VisionEncoder, BitwiseIndependentOfThreadsAndBatchF32) {
  ExpectInvariant(WriteTiny("venc_inv_f32.gguf", TensorType::kF32));
}

TEST(Gemma4VisionEncoder, BitwiseIndependentOfThreadsAndBatchQ8_0) {
  ExpectInvariant(WriteTiny("venc_inv_q8.gguf", TensorType::kQ8_0));
}

TEST(Gemma4VisionEncoder, BitwiseIndependentOfThreadsAndBatchPaddedHeadsAndGqa) {
  // head_dim 20 (zero-padded to 32 for the attention kernel), two query heads per KV head.
  Gemma4VisionConfig c = Gemma4VisionPreset("tiny");
  c.n_embd = 80;
  c.n_head = 4;
  c.n_head_kv = 2;
  c.head_dim = 20;
  const std::string path = TempPath("venc_inv_hd20.gguf");
  WriteRandomGemma4VisionMmproj(c, {}, path);
  ExpectInvariant(path);
}

// Max |a - b| / rms(a).
TEST(Gemma4VisionEncoding, PiecesInterleavedWithAnotherEncodingGiveTheSameBits) {
  auto enc = Gemma4VisionEncoder::Load(WriteTiny("venc_pieces.gguf", TensorType::kF32));
  ThreadPool pool(2);
  const std::vector<float> a = Pixels(96, 144, 3), b = Pixels(288, 240, 4);
  const std::vector<float> a_alone = enc->Encode(a.data(), 96, 144, pool);
  const std::vector<float> b_alone = enc->Encode(b.data(), 288, 240, pool);
  const Gemma4VisionEncoder::Image ia{a.data(), 96, 144}, ib{b.data(), 288, 240};
  Gemma4VisionEncoding ea(*enc, {&ia, 1}), eb(*enc, {&ib, 1});
  EXPECT_EQ(ea.pieces(), enc->config().n_layer + 2);
  EXPECT_THROW(ea.Take(), Error) << "taken before its last piece";
  int steps = 0;
  bool a_done = false, b_done = false;
  while (!a_done || !b_done) {
    if (!a_done) a_done = ea.Step(pool);
    if (!b_done) b_done = eb.Step(pool);
    ++steps;
    EXPECT_EQ(ea.done(), std::min(steps, ea.pieces()));
  }
  EXPECT_EQ(steps, ea.pieces());
  EXPECT_TRUE(ea.Step(pool)) << "a finished encoding stays finished";
  EXPECT_TRUE(BitwiseEqual(ea.Take()[0], a_alone));
  EXPECT_TRUE(BitwiseEqual(eb.Take()[0], b_alone));
}

double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  double ss = 0, worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ss += double(a[i]) * a[i];
    worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  }
  return worst / std::sqrt(ss / a.size());
}

TEST(Gemma4VisionEncoder, HalfAndQ8_0WeightsStayCloseToF32) {
  const std::vector<float> px = Pixels(144, 96, 3);
  ThreadPool pool(2);
  auto run = [&](TensorType type) {
    const std::string path =
        WriteTiny(std::string("venc_types_") + std::string(TensorTypeName(type)) + ".gguf", type);
    return Gemma4VisionEncoder::Load(path)->Encode(px.data(), 144, 96, pool);
  };
  const std::vector<float> f32 = run(TensorType::kF32);
  const double f16 = RelativeError(f32, run(TensorType::kF16));
  const double bf16 = RelativeError(f32, run(TensorType::kBF16));
  const double q8 = RelativeError(f32, run(TensorType::kQ8_0));
  EXPECT_GT(f16, 0.0);  // really another path
  EXPECT_LT(f16, 0.02);
  EXPECT_LT(bf16, 0.1);
  EXPECT_LT(q8, 0.1);
  std::printf("relative max error vs f32: f16 %.2e, bf16 %.2e, q8_0 %.2e\n", f16, bf16, q8);
}

TEST(Gemma4VisionEncoder, ClampsBiteAndChangeTheOutput) {
  const std::string src = WriteTiny("venc_clamps.gguf", TensorType::kF32);
  const std::string dst = TempPath("venc_noclamps.gguf");
  RewriteGguf(src, dst, nullptr, [](GgufWriter&, const TensorInfo& t) {
    return t.name.find("put_m") != std::string::npos;  // drop every bound
  });
  const std::vector<float> px = Pixels(96, 96, 5);
  ThreadPool pool(2);
  const auto a = Gemma4VisionEncoder::Load(src)->Encode(px.data(), 96, 96, pool);
  const auto b = Gemma4VisionEncoder::Load(dst)->Encode(px.data(), 96, 96, pool);
  EXPECT_GT(RelativeError(b, a), 1e-3);
}

TEST(Gemma4VisionEncoder, GeluOptionPicksTheActivation) {
  const std::string plain = WriteTiny("venc_gelu.gguf", TensorType::kF32);
  const std::string flagged = TempPath("venc_gelu_flag.gguf");
  RewriteGguf(
      plain, flagged, [](GgufWriter& w) { w.SetBool(mmproj::kUseGelu, true); }, nullptr);
  const std::vector<float> px = Pixels(96, 48, 9);
  ThreadPool pool(1);
  auto run = [&](const std::string& path, VisionGelu gelu) {
    auto enc = Gemma4VisionEncoder::Load(path, {.gelu = gelu});
    return enc->Encode(px.data(), 96, 48, pool);
  };
  const auto tanh = run(plain, VisionGelu::kTanh);
  const auto quick = run(plain, VisionGelu::kQuick);
  EXPECT_FALSE(BitwiseEqual(tanh, quick));
  EXPECT_TRUE(BitwiseEqual(quick, run(plain, VisionGelu::kFromFile)));
  EXPECT_TRUE(BitwiseEqual(tanh, run(flagged, VisionGelu::kFromFile)));
  EXPECT_TRUE(BitwiseEqual(tanh, run(flagged, VisionGelu::kTanh)));
}

TEST(Gemma4VisionEncoder, BadImagesAreRefusedBeforeAnyWork) {
  auto enc = Gemma4VisionEncoder::Load(WriteTiny("venc_bad.gguf", TensorType::kF32));
  const std::vector<float> px = Pixels(96, 96, 1);
  ThreadPool pool(1);
  EXPECT_NE(ErrorOf([&] { enc->Encode(px.data(), 95, 96, pool); }).find("width 95"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { enc->Encode(nullptr, 96, 96, pool); }).find("no pixels"),
            std::string::npos);
  const Gemma4VisionEncoder::Image images[2] = {{px.data(), 96, 96}, {px.data(), 96, 4800}};
  EXPECT_NE(ErrorOf([&] { enc->EncodeBatch(images, pool); }).find("position table"),
            std::string::npos);
  EXPECT_EQ(enc->Tokens(96, 96), 4);
}

}  // namespace
}  // namespace tandem
