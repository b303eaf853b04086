// The forward's kept activations (Gemma4Model::ScratchBytes): a verification's worth from the
// first call, a longer verification's growth kept, a prefill's cut back after it.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/thread_pool.h"
#include "model/gemma4/decoder_blocks.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"

namespace tandem {
namespace {

TEST(ForwardScratch, KeepsWhatAVerificationGrewAndCutsBackAfterAPrefill) {
  const std::string path = testing::TempDir() + "scratch.gguf";
  WriteRandomGemma4(Gemma4Preset("tiny-e2b"), RandomModelOptions(), path);
  auto model = Gemma4Model::Load(path);
  std::filesystem::remove(path);
  ThreadPool pool(1);
  auto cache = model->NewKvCache({.type = TensorType::kF16, .n_ctx = 1024, .max_batch = 512});
  ForwardOutput out;
  int position = 0;
  // `rows` tokens of sequence 0 after what it holds; the scratch bytes kept after them.
  const auto forward = [&](int rows) {
    ForwardBatch batch;
    for (int i = 0; i < rows; ++i, ++position) {
      batch.Add((position * 31 + 7) % model->config().n_vocab, position, 0, i == rows - 1);
    }
    model->Forward(batch, *cache, out, pool);
    return model->ScratchBytes();
  };
  EXPECT_EQ(model->ScratchBytes(), 0u);
  const size_t least = forward(1);
  EXPECT_GT(least, 0u);
  EXPECT_EQ(forward(BlockScratch::kMinRows), least) << "a verification's worth from the start";
  const int longer = BlockScratch::kShrinkAbove - 20;
  const size_t grown = forward(longer);
  EXPECT_GT(grown, least);
  EXPECT_EQ(forward(1), grown) << "a verification's growth is kept";
  EXPECT_EQ(forward(longer), grown) << "and used again without growing";
  EXPECT_EQ(forward(BlockScratch::kShrinkAbove + 1), least) << "a prefill's is cut back";
  EXPECT_EQ(forward(1), least);
}

}  // namespace
}  // namespace tandem
