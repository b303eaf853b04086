#include "model/gemma4/assistant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/matmul_repack.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"

namespace tandem {
namespace {

struct Fixture {
  std::unique_ptr<Gemma4Model> target;
  std::string assistant_path;
};

Fixture Make(const std::string& config, bool centroids) {
  // Unique per test: ctest runs the cases of this binary in parallel processes.
  const std::string dir =
      testing::TempDir() + testing::UnitTest::GetInstance()->current_test_info()->name() + "_";
  RandomModelOptions options;
  options.weight_type = TensorType::kQ8_0;
  Fixture f;
  WriteRandomGemma4(Gemma4Preset(config), options, dir + "at_" + config + ".gguf");
  f.assistant_path = dir + "at_" + config + (centroids ? "_c" : "_d") + "_asst.gguf";
  WriteRandomGemma4Assistant(Gemma4AssistantPreset(config, centroids), options, f.assistant_path);
  f.target = Gemma4Model::Load(dir + "at_" + config + ".gguf");
  return f;
}

// The centroid head computes logits only for the tokens of the kept clusters, and those are
// bitwise the dense head's logits for the same tokens (row gather == full matmul row).
TEST(Gemma4Assistant, CentroidHeadMatchesDenseHeadOnCandidates) {
  Fixture f = Make("tiny-e2b", true);
  auto centroid = Gemma4Assistant::Load(f.assistant_path, *f.target, DraftHead::kCentroid);
  auto dense = Gemma4Assistant::Load(f.assistant_path, *f.target, DraftHead::kDense);
  ASSERT_TRUE(centroid->uses_centroids());
  ASSERT_FALSE(dense->uses_centroids());
  const int V = f.target->config().n_vocab;
  ThreadPool pool(2);
  auto cache = f.target->NewKvCache({.type = TensorType::kF16, .n_ctx = 128});
  ForwardBatch batch;
  for (int i = 0; i < 40; ++i) batch.Add(2 + (i * 13) % 500, i, 0, i == 39);
  ForwardOutput out;
  f.target->Forward(batch, *cache, out, pool);
  const std::vector<DraftRow> rows = {{7, 40, 0, out.Hidden(39)}};
  DraftOutput c_out, d_out;
  centroid->Step(rows, *cache, c_out, pool);
  dense->Step(rows, *cache, d_out, pool);
  int candidates = 0;
  for (int t = 0; t < V; ++t) {
    const float c = c_out.Logits(0)[t];
    if (std::isinf(c)) continue;
    ++candidates;
    EXPECT_EQ(0, std::memcmp(&c, d_out.Logits(0) + t, sizeof c)) << "token " << t;
  }
  EXPECT_EQ(candidates, centroid->centroid_top_k() * V / centroid->n_centroids());
  EXPECT_EQ(0, std::memcmp(c_out.Hidden(0), d_out.Hidden(0), c_out.n_embd_out * sizeof(float)));
  // TokenLogits scores any tokens, kept or not, bitwise as the dense head does (from the step's
  // output-normed state).
  std::vector<int32_t> ids;
  for (int t = 0; t < V; ++t) {
    if (std::isinf(c_out.Logits(0)[t]) && ids.size() < 20) ids.push_back(t);
  }
  ASSERT_EQ(ids.size(), 20u);
  std::vector<float> values(ids.size());
  const int D = centroid->config().n_embd;
  centroid->TokenLogits(c_out.Normed(0, D), ids, values.data(), pool);
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(&values[i], d_out.Logits(0) + ids[i], sizeof(float))) << ids[i];
  }
}

// Repacked (Gemma4Weights::Pack, the default) and row-major assistants draft the same bits, for
// the dense and the centroid head, on every ISA path.
TEST(Gemma4Assistant, RepackedAndRowMajorWeightsDraftTheSameBits) {
  for (const bool centroids : {false, true}) {
    SCOPED_TRACE(centroids ? "centroid head" : "dense head");
    Fixture f = Make("tiny-e2b", centroids);
    auto packed = Gemma4Assistant::Load(f.assistant_path, *f.target);
    auto row_major =
        Gemma4Assistant::Load(f.assistant_path, *f.target, DraftHead::kAuto, {.repack = false});
    EXPECT_TRUE(row_major->weights().packed.empty());
    EXPECT_EQ(packed->weights().packed.empty(), !kernels::MatMulReadsPacked(TensorType::kQ8_0));
    ThreadPool pool(2);
    auto cache = f.target->NewKvCache({.type = TensorType::kF16, .n_ctx = 128});
    ForwardBatch batch;
    for (int i = 0; i < 40; ++i) batch.Add(2 + (i * 13) % 500, i, 0, i >= 37);
    ForwardOutput out;
    f.target->Forward(batch, *cache, out, pool);
    const std::vector<DraftRow> rows = {{7, 40, 0, out.Hidden(39)}, {11, 39, 0, out.Hidden(38)}};
    const int V = f.target->config().n_vocab;
    for (kernels::Isa isa : kernels::SupportedIsas()) {
      kernels::SetActiveIsa(isa);
      SCOPED_TRACE(std::string(kernels::IsaName(isa)));
      DraftOutput want, got;
      row_major->Step(rows, *cache, want, pool);
      packed->Step(rows, *cache, got, pool);
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(0, std::memcmp(want.Logits(r), got.Logits(r), V * sizeof(float))) << r;
        EXPECT_EQ(0, std::memcmp(want.Hidden(r), got.Hidden(r), want.n_embd_out * sizeof(float)))
            << r;
      }
    }
    kernels::SetActiveIsa(kernels::DefaultIsa());
  }
}

TEST(Gemma4Assistant, PairsWithTheLastOwningLayersOfTheTarget) {
  Fixture f = Make("tiny-e2b", false);
  auto a = Gemma4Assistant::Load(f.assistant_path, *f.target);
  EXPECT_FALSE(a->has_centroids());
  // tiny-e2b: layers 3, 4 share layer 1 (sliding), layer 5 shares layer 2 (full).
  EXPECT_EQ(a->target_kv_layer(0), 1);
  EXPECT_EQ(a->target_kv_layer(2), 1);
  EXPECT_EQ(a->target_kv_layer(3), 2);
  EXPECT_THROW(Gemma4Assistant::Load(f.assistant_path, *f.target, DraftHead::kCentroid), Error);
}

TEST(Gemma4Assistant, MismatchedTargetIsAClearError) {
  Fixture e2b = Make("tiny-e2b", false);
  Fixture big = Make("tiny-31b", false);  // same vocabulary, other hidden size and head layout
  try {
    Gemma4Assistant::Load(e2b.assistant_path, *big.target);
    FAIL() << "expected a pairing error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit the target"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Gemma4Assistant::Load(e2b.assistant_path + ".missing", *e2b.target), Error);
}

}  // namespace
}  // namespace tandem
