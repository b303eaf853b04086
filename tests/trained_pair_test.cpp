// Speculative decoding on the trained pair that ships in models/ (issue 10): real acceptance, and
// still lossless. Greedy MTP output equals plain greedy output for every draft length, thread
// count, KV type and LM head; the assistant really predicts the target (acceptance far above the
// ~0 of untrained weights); the adaptive controller chooses to draft and stays lossless.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "engine/generator.h"
#include "gguf/gguf_reader.h"
#include "greedy_params.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/target.h"
#include "speculative/loaded_drafters.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

const std::string kModels = std::string(TANDEM_SOURCE_DIR) + "/models/";
const std::string kTarget = kModels + "tandem-gemma4-tiny-Q8_0.gguf";
const std::string kAssistant = kModels + "tandem-gemma4-tiny-assistant-Q8_0.gguf";

// Floors well under what the shipped pair measures (models/README.md); untrained weights give ~0.
constexpr double kMinAcceptanceAllLengths = 0.1;     // measured 0.21 (long drafts dilute it)
constexpr double kMinFirstPositionAcceptance = 0.5;  // measured 0.80
constexpr double kMinTokensPerForward = 1.6;         // measured 2.34 at draft-max 3

// Python source openings, like the corpus the pair was trained on (not taken from it).
const char* const kPrompts[] = {
    "def fibonacci(n):\n    \"\"\"Return the n-th Fibonacci number.\"\"\"\n",
    "import os\nimport sys\n\n\nclass Config:\n    def __init__(self, path):\n",
    "    for key, value in sorted(items.items()):\n        if value is None:\n",
};

class TrainedPair : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!std::filesystem::exists(kTarget) || !std::filesystem::exists(kAssistant)) return;
    target_ = Gemma4Model::Load(kTarget).release();
    centroid_ = Gemma4Assistant::Load(kAssistant, *target_, DraftHead::kCentroid).release();
    dense_ = Gemma4Assistant::Load(kAssistant, *target_, DraftHead::kDense).release();
    tokenizer_ = new Tokenizer(LoadVocabFromGguf(target_->file()));
  }
  static void TearDownTestSuite() {
    delete tokenizer_;
    delete dense_;
    delete centroid_;
    delete target_;
  }
  void SetUp() override {
    if (target_ == nullptr) GTEST_SKIP() << "trained pair absent: " << kTarget;
  }
  static std::vector<int32_t> Prompt(int i) {
    return tokenizer_->Encode(kPrompts[i], {.add_special = true});
  }

  static Gemma4Model* target_;
  static Gemma4Assistant* centroid_;
  static Gemma4Assistant* dense_;
  static Tokenizer* tokenizer_;
};

Gemma4Model* TrainedPair::target_ = nullptr;
Gemma4Assistant* TrainedPair::centroid_ = nullptr;
Gemma4Assistant* TrainedPair::dense_ = nullptr;
Tokenizer* TrainedPair::tokenizer_ = nullptr;

TEST_F(TrainedPair, ShipsWithACentroidHead) {
  EXPECT_TRUE(centroid_->uses_centroids());
  EXPECT_GT(centroid_->n_centroids(), 1);
  EXPECT_LT(centroid_->centroid_top_k(), centroid_->n_centroids());
}

TEST_F(TrainedPair, GreedyMtpIsIdenticalForEveryDraftLengthThreadsKvTypeAndHead) {
  const int n = 96;
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2)};
  int64_t drafted = 0, accepted = 0;
  for (int i = 0; i < static_cast<int>(std::size(kPrompts)); ++i) {
    const std::vector<int32_t> prompt = Prompt(i);
    for (TensorType kv : {TensorType::kF16, TensorType::kQ8_0}) {
      Generator plain(*target_, {}, pools[1], {.type = kv, .n_ctx = 512});
      const GenerateResult want = plain.Generate(prompt, Greedy(n, SpecType::kNone, 0, false), {});
      for (int draft_max = 1; draft_max <= 16; ++draft_max) {
        const Gemma4Assistant* head = draft_max % 2 ? centroid_ : dense_;
        Generator gen(*target_, MakeDrafters({*target_, head, nullptr, pools[draft_max % 2]}),
                      pools[draft_max % 2], {.type = kv, .n_ctx = 512});
        const GenerateResult r =
            gen.Generate(prompt, Greedy(n, SpecType::kMtp, draft_max, false), {});
        ASSERT_EQ(r.tokens, want.tokens)
            << "prompt " << i << ", draft_max " << draft_max << ", kv " << TensorTypeName(kv)
            << (head == dense_ ? ", dense head" : ", centroid head");
        drafted += r.spec.drafted;
        accepted += r.spec.accepted;
      }
    }
  }
  ASSERT_GT(drafted, 0);
  const double acceptance = double(accepted) / double(drafted);
  std::printf("acceptance over draft lengths 1..16: %.3f\n", acceptance);
  EXPECT_GT(acceptance, kMinAcceptanceAllLengths)
      << "the trained assistant should predict its target";
}

TEST_F(TrainedPair, AcceptanceByPositionIsReal) {
  ThreadPool pool(2);
  SpeculationStats stats;
  for (int i = 0; i < static_cast<int>(std::size(kPrompts)); ++i) {
    Generator gen(*target_, MakeDrafters({*target_, centroid_, nullptr, pool}), pool,
                  {.type = TensorType::kF16, .n_ctx = 512});
    stats.Add(gen.Generate(Prompt(i), Greedy(128, SpecType::kMtp, 3, false), {}).spec);
  }
  const std::vector<double> by_position = stats.AcceptanceByPosition();
  ASSERT_EQ(by_position.size(), 3u);
  std::printf(
      "draft-max 3: acceptance by position %.3f %.3f %.3f, %.2f tokens per target forward\n",
      by_position[0], by_position[1], by_position[2], stats.TokensPerTargetForward());
  EXPECT_GT(by_position[0], kMinFirstPositionAcceptance);
  EXPECT_GT(stats.TokensPerTargetForward(), kMinTokensPerForward);
}

// Draft trees on a pair whose assistant's runner-up is sometimes the target's choice: branches
// are taken (their K/V moved behind the committed token) and the output stays plain greedy's.
// Tokens per target forward against the chain at the same trunk are printed (bench/README.md
// holds the measured comparison).
TEST_F(TrainedPair, DraftTreesTakeBranchesAndStayLossless) {
  ThreadPool pool(2);
  SpeculationStats chain, tree;
  for (int i = 0; i < static_cast<int>(std::size(kPrompts)); ++i) {
    Generator plain(*target_, {}, pool, {.type = TensorType::kF16, .n_ctx = 512});
    const GenerateResult want =
        plain.Generate(Prompt(i), Greedy(128, SpecType::kNone, 0, false), {});
    for (int width = 0; width <= kMaxTreeWidth; width += width == 0 ? 2 : 1) {
      for (int draft_max : {2, 4}) {
        for (const Gemma4Assistant* head : {centroid_, dense_}) {
          Generator gen(*target_, MakeDrafters({*target_, head, nullptr, pool}), pool,
                        {.type = TensorType::kF16, .n_ctx = 512});
          GenerateParams params = Greedy(128, SpecType::kMtp, draft_max, false);
          params.spec.tree_width = width;
          const GenerateResult r = gen.Generate(Prompt(i), params, {});
          ASSERT_EQ(r.tokens, want.tokens)
              << "prompt " << i << ", width " << width << ", draft_max " << draft_max;
          (width == 0 ? chain : tree).Add(r.spec);
        }
      }
    }
  }
  std::printf(
      "trees: %lld rounds, %lld branches, %lld taken; tokens per target forward %.2f "
      "(chains %.2f)\n",
      static_cast<long long>(tree.tree_rounds), static_cast<long long>(tree.tree_branches),
      static_cast<long long>(tree.tree_branches_accepted), tree.TokensPerTargetForward(),
      chain.TokensPerTargetForward());
  EXPECT_GT(tree.tree_rounds, 100);
  EXPECT_GT(tree.tree_branches_accepted, 10)
      << "the trained assistant's runner-up is sometimes right";

  // Sampled: each emitted token is the target's own draw with the request's generator, one per
  // token as plain sampling makes, so the output is plain sampling's for the same seed.
  int64_t sampled_taken = 0;
  for (uint32_t seed = 0; seed < 12; ++seed) {
    GenerateParams params = Greedy(96, SpecType::kNone, 0, false);
    params.sampling.temperature = 0.8f;
    params.sampling.seed = seed;
    Generator plain(*target_, {}, pool, {.type = TensorType::kF16, .n_ctx = 512});
    const GenerateResult want = plain.Generate(Prompt(seed % 3), params, {});
    params.spec = Greedy(96, SpecType::kMtp, 2 + seed % 4, seed % 2 == 0).spec;
    params.spec.tree_width = 2 + seed % 3;
    Generator gen(*target_, MakeDrafters({*target_, centroid_, nullptr, pool}), pool,
                  {.type = TensorType::kF16, .n_ctx = 512});
    const GenerateResult r = gen.Generate(Prompt(seed % 3), params, {});
    ASSERT_EQ(r.tokens, want.tokens) << "seed " << seed;
    sampled_taken += r.spec.tree_branches_accepted;
  }
  EXPECT_GT(sampled_taken, 0) << "sampled requests take branches too";
}

TEST_F(TrainedPair, AdaptiveDraftsAndStaysLossless) {
  ThreadPool pool(2);
  for (int i = 0; i < static_cast<int>(std::size(kPrompts)); ++i) {
    Generator plain(*target_, {}, pool, {.type = TensorType::kF16, .n_ctx = 512});
    Generator spec(*target_, MakeDrafters({*target_, centroid_, nullptr, pool}), pool,
                   {.type = TensorType::kF16, .n_ctx = 512});
    const GenerateResult want =
        plain.Generate(Prompt(i), Greedy(128, SpecType::kNone, 0, false), {});
    const GenerateResult r = spec.Generate(Prompt(i), Greedy(128, SpecType::kMtp, 8, true), {});
    EXPECT_EQ(r.tokens, want.tokens) << "prompt " << i;
    EXPECT_GT(r.spec.rounds, 0) << "adaptive never drafted on a pair that accepts";
  }
}

}  // namespace
}  // namespace tandem
