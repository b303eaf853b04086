// Gemma4Weights::MatricesPerRow: the multiply-adds a forward does per row (`tandem bench`'s
// compute floor) against the count from the config's shapes, for a dense PLE model and a MoE.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"

namespace tandem {
namespace {

// Multiply-adds per row from the config alone: every layer's projections (K and V only where
// the layer computes its own, V only where it is not K), its GeGLU or experts, its per-layer
// embedding gate and projection; the per-layer-embedding model projection and the LM head.
double MacsFromConfig(const Gemma4Config& c) {
  const double D = c.n_embd, P = c.n_embd_per_layer;
  double macs = static_cast<double>(c.n_vocab) * D + D * P * c.n_layer;
  for (const Gemma4LayerConfig& l : c.layers) {
    const double q = static_cast<double>(c.n_head) * l.head_dim;
    const double kv = static_cast<double>(l.n_head_kv) * l.head_dim;
    macs += 2 * D * q;  // Q and the output projection
    if (l.owns_kv) macs += D * kv * ((!l.sliding && c.full_v_equals_k) ? 1 : 2);
    macs += 3 * D * l.n_ff;
    macs += 2 * D * P;
    if (c.n_expert > 0) {
      macs += D * c.n_expert + c.n_expert_used * 3 * D * c.n_ff_expert;
    }
  }
  return macs;
}

double MacsPerRow(const Gemma4Model& model) {
  double macs = 0;
  for (const MatrixUse& use : model.weights().MatricesPerRow(model.config())) {
    EXPECT_NE(use.matrix.data, nullptr);
    macs += static_cast<double>(use.matrix.rows) * use.matrix.cols * use.per_row;
  }
  return macs;
}

class MatricesPerRow : public testing::TestWithParam<std::string> {};

TEST_P(MatricesPerRow, CountTheConfigsMultiplyAdds) {
  const Gemma4Config config = Gemma4Preset(GetParam());
  const std::string path = testing::TempDir() + "matrices_" + GetParam() + ".gguf";
  WriteRandomGemma4(config, RandomModelOptions(), path);
  auto model = Gemma4Model::Load(path);
  std::filesystem::remove(path);
  EXPECT_EQ(MacsPerRow(*model), MacsFromConfig(model->config()));
}

// A file may carry K and V projections for layers that read another layer's cache; the forward
// never multiplies by them.
TEST(MatricesPerRowOfWeights, LeaveOutTheKAndVOfLayersThatShareACache) {
  static const uint8_t bytes[64] = {};
  const auto matrix = [](int64_t rows) {
    return kernels::DenseWeightMatrix(TensorType::kF32, bytes, rows, 4);
  };
  Gemma4Config config;
  config.layers.resize(2);
  config.layers[1].owns_kv = false;
  Gemma4Weights w;
  w.output = matrix(10);
  w.layers.resize(2);
  for (Gemma4LayerWeights& l : w.layers) {
    l.attn_q = matrix(100);
    l.attn_k = matrix(1000);
    l.attn_v = matrix(10000);
  }
  double macs = 0;
  for (const MatrixUse& use : w.MatricesPerRow(config)) macs += use.matrix.rows * 4.0;
  EXPECT_EQ(macs, 4.0 * (10 + 100 + 1000 + 10000 + 100));
}

INSTANTIATE_TEST_SUITE_P(Presets, MatricesPerRow,
                         testing::Values("tiny-e2b", "tiny-26b-a4b", "tiny-31b"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace tandem
