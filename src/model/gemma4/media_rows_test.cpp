// Media rows (ForwardBatch::AddEmbedding): an embedding row enters unscaled with token 0's
// per-layer embedding, and the attention rule over an image's rows (MediaAttention) holds on the
// layers it names and nowhere else.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"

namespace tandem {
namespace {

std::string ModelPath(const std::string& preset) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tandem_media_rows_" + preset + ".gguf")).string();
  if (!std::filesystem::exists(path)) WriteRandomGemma4(Gemma4Preset(preset), {}, path);
  return path;
}

// A row that is not any token's embedding: smooth values of unit size.
std::vector<float> SoftRow(int n, int salt) {
  std::vector<float> row(n);
  for (int i = 0; i < n; ++i) row[i] = std::sin(0.37f * static_cast<float>(i + 11 * salt));
  return row;
}

// One row of the batch: a token, or an embedding (token < 0) seeing up to `until` (-1: itself).
struct Row {
  int32_t token = -1;
  const float* embedding = nullptr;
  int32_t until = -1;
};

std::vector<std::vector<float>> Evaluate(const Gemma4Model& model, const std::vector<Row>& rows,
                                         int chunk, int threads = 2) {
  ThreadPool pool(threads);
  auto cache = model.NewKvCache({.n_ctx = 128, .n_seq = 1, .max_batch = 64});
  std::vector<std::vector<float>> logits;
  ForwardOutput out;
  for (size_t start = 0; start < rows.size(); start += chunk) {
    ForwardBatch batch;
    for (size_t i = start; i < std::min(rows.size(), start + chunk); ++i) {
      const int32_t pos = static_cast<int32_t>(i);
      if (rows[i].embedding) {
        batch.AddEmbedding(rows[i].embedding, pos, 0, rows[i].until < 0 ? pos : rows[i].until,
                           true);
      } else {
        batch.Add(rows[i].token, pos, 0, true);
      }
    }
    model.Forward(batch, *cache, out, pool);
    for (size_t j = 0; j < out.logit_rows.size(); ++j) {
      logits.emplace_back(out.Logits(static_cast<int>(j)),
                          out.Logits(static_cast<int>(j)) + out.n_vocab);
    }
  }
  return logits;
}

class MediaRowsTest : public ::testing::TestWithParam<const char*> {};

// Token 0's scaled embedding given as an embedding row is token 0 itself, bit for bit: the row is
// not scaled again and takes token 0's per-layer embedding (the projection part from the row).
TEST_P(MediaRowsTest, TokenZerosScaledEmbeddingIsTokenZero) {
  auto model = Gemma4Model::Load(ModelPath(GetParam()));
  std::vector<float> e0(model->n_embd());
  model->EmbedToken(0, e0.data());
  const std::vector<Row> as_tokens = {{2}, {7}, {0}, {0}, {9}, {4}};
  const std::vector<Row> as_rows = {{2}, {7}, {-1, e0.data()}, {-1, e0.data()}, {9}, {4}};
  EXPECT_EQ(Evaluate(*model, as_tokens, 6), Evaluate(*model, as_rows, 6));
  // And a row that is no token changes what follows.
  const std::vector<float> soft = SoftRow(model->n_embd(), 1);
  const std::vector<Row> other = {{2}, {7}, {-1, soft.data()}, {-1, e0.data()}, {9}, {4}};
  EXPECT_NE(Evaluate(*model, as_rows, 6).back(), Evaluate(*model, other, 6).back());
}

// Causal image rows: the same bits whatever the chunking and thread count.
TEST_P(MediaRowsTest, CausalMediaRowsKeepTheNumericsContract) {
  auto model =
      Gemma4Model::Load(ModelPath(GetParam()), {.media_attention = MediaAttention::kCausal});
  const std::vector<float> a = SoftRow(model->n_embd(), 1), b = SoftRow(model->n_embd(), 2),
                           c = SoftRow(model->n_embd(), 3);
  const std::vector<Row> rows = {{2},  {5}, {-1, a.data()}, {-1, b.data()}, {-1, c.data()}, {3},
                                 {11}, {4}};
  const auto whole = Evaluate(*model, rows, 8, 2);
  EXPECT_EQ(whole, Evaluate(*model, rows, 3, 1));
  EXPECT_EQ(whole, Evaluate(*model, rows, 1, 2));
}

// Bidirectional image rows see the image's later rows; rows outside the image do not change.
TEST_P(MediaRowsTest, BidirectionalRowsSeeTheWholeImage) {
  const std::string path = ModelPath(GetParam());
  auto causal = Gemma4Model::Load(path, {.media_attention = MediaAttention::kCausal});
  auto both = Gemma4Model::Load(path, {.media_attention = MediaAttention::kBidirectional});
  auto sliding =
      Gemma4Model::Load(path, {.media_attention = MediaAttention::kBidirectionalSliding});
  EXPECT_FALSE(causal->MediaBidirectional());
  EXPECT_TRUE(both->MediaBidirectional());
  const int D = causal->n_embd();
  const std::vector<float> a = SoftRow(D, 1), b = SoftRow(D, 2), c = SoftRow(D, 3),
                           c2 = SoftRow(D, 4);
  auto rows_with = [&](const std::vector<float>& last) {
    return std::vector<Row>{{2}, {-1, a.data(), 3}, {-1, b.data(), 3}, {-1, last.data(), 3}, {4}};
  };
  // The image's first row changes with its last row when it attends both ways.
  for (const Gemma4Model* m : {both.get(), sliding.get()}) {
    const auto x = Evaluate(*m, rows_with(c), 5), y = Evaluate(*m, rows_with(c2), 5);
    EXPECT_EQ(x[0], y[0]);  // the text row before the image
    EXPECT_NE(x[1], y[1]);
  }
  // Causal: sees_until beyond the row is ignored by the rule, so it equals plain causal rows.
  const auto cx = Evaluate(*causal, rows_with(c), 5), cy = Evaluate(*causal, rows_with(c2), 5);
  EXPECT_EQ(cx[1], cy[1]);
  EXPECT_EQ(cx[2], cy[2]);
  EXPECT_NE(cx[3], cy[3]);
  // The three rules differ from each other once the image attends ahead.
  const auto bx = Evaluate(*both, rows_with(c), 5), sx = Evaluate(*sliding, rows_with(c), 5);
  EXPECT_NE(bx[1], cx[1]);
  EXPECT_NE(bx[1], sx[1]);
  // Bidirectional rows keep the numerics contract too (an image is never split).
  EXPECT_EQ(bx, Evaluate(*both, rows_with(c), 5, 1));
}

TEST_P(MediaRowsTest, SeesUntilOutsideTheBatchIsRefused) {
  auto model = Gemma4Model::Load(ModelPath(GetParam()));
  const std::vector<float> a = SoftRow(model->n_embd(), 1);
  ThreadPool pool(1);
  auto cache = model->NewKvCache({.n_ctx = 64, .n_seq = 1, .max_batch = 8});
  ForwardBatch batch;
  batch.Add(2, 0, 0, false);
  batch.AddEmbedding(a.data(), 1, 0, 5, true);  // the image would end at 5, not in this batch
  ForwardOutput out;
  EXPECT_THROW(model->Forward(batch, *cache, out, pool), Error);
  EXPECT_EQ(cache->Length(0), 0);
}

INSTANTIATE_TEST_SUITE_P(Presets, MediaRowsTest, ::testing::Values("tiny-e2b", "tiny-31b"));

}  // namespace
}  // namespace tandem
