// The numerics contract: a token's logits and hidden state are bitwise identical whether it was
// computed in a prefill batch, a one-token decode step or a batch mixed with other sequences,
// with any thread count.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/matmul_repack.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"

namespace tandem {
namespace {

struct Rows {
  std::vector<std::vector<float>> logits, hidden;
};

// Evaluates sequence `tokens` (seq 0) in chunks of `chunk` rows; when `mix` is set a second
// sequence with other tokens is interleaved into every batch.
Rows RunModel(const Gemma4Model& model, const std::vector<int>& tokens, int chunk, bool mix,
              int threads, TensorType kv_type) {
  ThreadPool pool(threads);
  auto cache = model.NewKvCache({.type = kv_type, .n_ctx = 128, .n_seq = 2, .max_batch = 64});
  Rows rows;
  ForwardOutput out;
  for (size_t start = 0; start < tokens.size(); start += chunk) {
    ForwardBatch batch;
    const size_t end = std::min(tokens.size(), start + chunk);
    for (size_t i = start; i < end; ++i) {
      if (mix)
        batch.Add((tokens[i] * 7 + 3) % model.config().n_vocab, static_cast<int>(i), 1, true);
      batch.Add(tokens[i], static_cast<int>(i), 0, true);
    }
    model.Forward(batch, *cache, out, pool);
    for (size_t j = 0; j < out.logit_rows.size(); ++j) {
      const int row = out.logit_rows[j];
      if (batch.seqs[row] != 0) continue;
      rows.logits.emplace_back(out.Logits(static_cast<int>(j)),
                               out.Logits(static_cast<int>(j)) + out.n_vocab);
      rows.hidden.emplace_back(out.Hidden(row), out.Hidden(row) + out.n_embd);
    }
  }
  return rows;
}

void ExpectBitwiseEqual(const Rows& a, const Rows& b, const std::string& what) {
  ASSERT_EQ(a.logits.size(), b.logits.size()) << what;
  for (size_t i = 0; i < a.logits.size(); ++i) {
    ASSERT_EQ(0, std::memcmp(a.logits[i].data(), b.logits[i].data(), a.logits[i].size() * 4))
        << what << ": logits of position " << i;
    ASSERT_EQ(0, std::memcmp(a.hidden[i].data(), b.hidden[i].data(), a.hidden[i].size() * 4))
        << what << ": hidden of position " << i;
  }
}

// A random Q8_0 model of `preset`, written to `path` and loaded.
std::unique_ptr<Gemma4Model> LoadRandomQ8(const char* preset, const std::string& path) {
  RandomModelOptions options;
  options.weight_type = TensorType::kQ8_0;
  WriteRandomGemma4(Gemma4Preset(preset), options, path);
  return Gemma4Model::Load(path);
}

class ForwardInvariance : public testing::TestWithParam<const char*> {};

TEST_P(ForwardInvariance, PrefillDecodeMixedAndThreadsAgreeBitwise) {
  const std::string path = testing::TempDir() + "invariance_" + GetParam() + ".gguf";
  auto model = LoadRandomQ8(GetParam(), path);
  std::vector<int> tokens;
  for (int i = 0; i < 45; ++i) tokens.push_back((i * 37 + 11) % model->config().n_vocab);
  for (kernels::Isa isa : kernels::SupportedIsas()) {
    kernels::SetActiveIsa(isa);
    SCOPED_TRACE(std::string(kernels::IsaName(isa)));
    for (TensorType kv : {TensorType::kF16, TensorType::kQ8_0}) {
      Rows prefill = RunModel(*model, tokens, 45, false, 1, kv);
      ExpectBitwiseEqual(prefill, RunModel(*model, tokens, 1, false, 1, kv), "decode");
      ExpectBitwiseEqual(prefill, RunModel(*model, tokens, 5, true, 2, kv), "mixed chunks of 5");
      ExpectBitwiseEqual(prefill, RunModel(*model, tokens, 13, false, 3, kv),
                         "chunks of 13, 3 threads");
    }
  }
  kernels::SetActiveIsa(kernels::DefaultIsa());
  std::filesystem::remove(path);
}

// A draft tree verified in one forward (ForwardBatch::tree_parent_offset): each node's logits and
// hidden are bitwise those of the same row in a linear verify of its path, and a kept path
// moved to its linear positions (KvCache::CopyPosition) leaves the cache as a linear verify of
// it would: the next decode step gives the same bits.
TEST_P(ForwardInvariance, DraftTreeRowsMatchALinearVerifyOfTheirPath) {
  const std::string path = testing::TempDir() + "tree_" + GetParam() + ".gguf";
  auto model = LoadRandomQ8(GetParam(), path);
  const int V = model->config().n_vocab;
  std::vector<int> prompt;
  for (int i = 0; i < 40; ++i) prompt.push_back((i * 37 + 11) % V);
  const int32_t P = static_cast<int32_t>(prompt.size());
  // Nodes after the root (the prompt's next token at P): parent (-1: the root) and token.
  const std::vector<int> parent = {-1, -1, 0, 0, 2, 1, 4, 4};
  std::vector<int32_t> token;
  for (size_t i = 0; i < parent.size(); ++i)
    token.push_back(static_cast<int32_t>((i * 53 + 7) % V));
  const int32_t root = 5;
  ThreadPool pool(2);
  ForwardOutput out;
  auto prefilled = [&] {
    auto cache =
        model->NewKvCache({.type = TensorType::kF16, .n_ctx = 128, .n_seq = 2, .max_batch = 64});
    ForwardBatch batch;
    for (int32_t i = 0; i < P; ++i) batch.Add(prompt[i], i, 0, false);
    batch.Add(3, 0, 1, false);  // another sequence beside it
    model->Forward(batch, *cache, out, pool);
    return cache;
  };
  auto paths_of = [&](int node) {
    std::vector<int> nodes;
    for (int n = node; n >= 0; n = parent[n]) nodes.insert(nodes.begin(), n);
    return nodes;
  };
  for (kernels::Isa isa : kernels::SupportedIsas()) {
    kernels::SetActiveIsa(isa);
    SCOPED_TRACE(std::string(kernels::IsaName(isa)));
    auto tree_cache = prefilled();
    ForwardBatch tree;
    tree.Add(4, 1, 1, true);  // a row of the other sequence first
    tree.Add(root, P, 0, true);
    for (size_t i = 0; i < parent.size(); ++i) {
      tree.Add(token[i], P + 1 + static_cast<int32_t>(i), 0, true);
      tree.SetTreeParent(parent[i] < 0 ? 1 : 2 + parent[i]);
    }
    ForwardOutput tree_out;
    model->Forward(tree, *tree_cache, tree_out, pool);
    for (size_t node = 0; node < parent.size(); ++node) {
      SCOPED_TRACE("node " + std::to_string(node));
      const std::vector<int> nodes = paths_of(static_cast<int>(node));
      auto linear_cache = prefilled();
      ForwardBatch linear;
      linear.Add(root, P, 0, true);
      for (size_t j = 0; j < nodes.size(); ++j) {
        linear.Add(token[nodes[j]], P + 1 + static_cast<int32_t>(j), 0, true);
      }
      ForwardOutput linear_out;
      model->Forward(linear, *linear_cache, linear_out, pool);
      const int tree_row = 2 + static_cast<int>(node), linear_row = linear.size() - 1;
      ASSERT_EQ(0, std::memcmp(tree_out.Logits(tree_row), linear_out.Logits(linear_row), V * 4));
      ASSERT_EQ(0, std::memcmp(tree_out.Hidden(tree_row), linear_out.Hidden(linear_row),
                               model->config().n_embd * 4));
      if (node + 1 != parent.size()) continue;
      // Keep this path: move it to P + 1.., drop the rest, decode one more token in both.
      for (size_t j = 0; j < nodes.size(); ++j) {
        const int32_t from = P + 1 + nodes[j], to = P + 1 + static_cast<int32_t>(j);
        if (from != to) tree_cache->CopyPosition(0, from, to);
      }
      const int32_t next = P + 1 + static_cast<int32_t>(nodes.size());
      tree_cache->Truncate(0, next);
      ForwardBatch step;
      step.Add(9, next, 0, true);
      ForwardOutput a, b;
      model->Forward(step, *tree_cache, a, pool);
      model->Forward(step, *linear_cache, b, pool);
      ASSERT_EQ(0, std::memcmp(a.Logits(0), b.Logits(0), V * 4)) << "decode after the kept path";
    }
  }
  kernels::SetActiveIsa(kernels::DefaultIsa());
  std::filesystem::remove(path);
}

// Weights repacked at load (kernels/matmul_repack.h) give the row-major weights' bits, on every
// path, for prefill and decode.
TEST(ForwardRepack, PackedAndRowMajorWeightsAgreeBitwiseOnEveryIsa) {
  for (TensorType type :
       {TensorType::kQ4_0, TensorType::kQ8_0, TensorType::kQ4_K, TensorType::kQ6_K}) {
    SCOPED_TRACE(std::string(TensorTypeName(type)));
    const std::string path = testing::TempDir() + "repack.gguf";
    RandomModelOptions options;
    options.weight_type = type;
    WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, path);
    kernels::SetActiveIsa(kernels::DefaultIsa());
    auto packed = Gemma4Model::Load(path, {.repack = true});
    auto row_major = Gemma4Model::Load(path, {.repack = false});
    EXPECT_TRUE(row_major->weights().packed.empty());
    if (kernels::MatMulReadsPacked(type)) {
      EXPECT_FALSE(packed->weights().packed.empty());
    }
    std::vector<int> tokens;
    for (int i = 0; i < 21; ++i) tokens.push_back((i * 29 + 5) % packed->config().n_vocab);
    for (kernels::Isa isa : kernels::SupportedIsas()) {
      kernels::SetActiveIsa(isa);
      SCOPED_TRACE(std::string(kernels::IsaName(isa)));
      const Rows want = RunModel(*row_major, tokens, 21, false, 2, TensorType::kF16);
      ExpectBitwiseEqual(want, RunModel(*packed, tokens, 21, false, 2, TensorType::kF16),
                         "packed prefill");
      ExpectBitwiseEqual(want, RunModel(*packed, tokens, 1, false, 1, TensorType::kF16),
                         "packed decode");
    }
    kernels::SetActiveIsa(kernels::DefaultIsa());
    std::filesystem::remove(path);
  }
}

INSTANTIATE_TEST_SUITE_P(TinyPresets, ForwardInvariance,
                         testing::Values("tiny-e2b", "tiny-e4b", "tiny-26b-a4b", "tiny-31b"));

}  // namespace
}  // namespace tandem
