#include "model/gemma4/random_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/gemma4/presets.h"

namespace tandem {
namespace {

// Row r of an f32 tensor of `file`.
std::vector<float> F32Row(const GgufFile& file, const std::string& name, uint64_t r) {
  const TensorInfo* t = file.FindTensor(name);
  if (t == nullptr || t->type != TensorType::kF32) {
    ADD_FAILURE() << name << " is not an f32 tensor of the file";
    return {};
  }
  std::vector<float> row(t->ne[0]);
  std::memcpy(row.data(), file.TensorData(*t) + r * t->ne[0] * sizeof(float),
              row.size() * sizeof(float));
  return row;
}

struct PairFiles {
  std::unique_ptr<GgufFile> plain, paired;
};

// The same model with and without token pairs (f32 weights, the echo knob on in both).
PairFiles WritePair(bool assistant, float spread) {
  const std::string dir = testing::TempDir();
  const std::string kind = assistant ? "assistant" : "target";
  PairFiles files;
  for (const bool paired : {false, true}) {
    RandomModelOptions options;
    options.echo_epsilon = 0.0f;
    options.echo_pair_spread = paired ? spread : -1.0f;
    const std::string path = dir + "random_pairs_" + kind + (paired ? "_paired" : "") + ".gguf";
    if (assistant) {
      WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", false), options, path);
    } else {
      WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, path);
    }
    (paired ? files.paired : files.plain) = GgufFile::Open(path);
    std::filesystem::remove(path);
  }
  return files;
}

// Token pairs (RandomModelOptions::echo_pair_spread): even rows as without pairs, odd row
// 2k + 1 = row 2k + spread x the row 2k + 1 it has without pairs; nothing else changes.
TEST(RandomModel, TokenPairsMakeOddEmbeddingRowsTheirEvenRowPlusTheSpread) {
  constexpr float kSpread = 0.05f;
  for (const bool assistant : {false, true}) {
    SCOPED_TRACE(assistant ? "assistant" : "target");
    const PairFiles f = WritePair(assistant, kSpread);
    for (uint64_t r : {0, 1, 2, 3, 100, 101}) {
      const std::vector<float> base = F32Row(*f.plain, "token_embd.weight", r & ~uint64_t{1});
      const std::vector<float> own = F32Row(*f.plain, "token_embd.weight", r);
      const std::vector<float> got = F32Row(*f.paired, "token_embd.weight", r);
      ASSERT_EQ(got.size(), own.size());
      float diff = 0;  // the paired row moves from the unpaired one unless it is even
      for (size_t i = 0; i < got.size(); ++i) {
        const float want = r % 2 == 0 ? own[i] : base[i] + kSpread * own[i];
        EXPECT_NEAR(got[i], want, 1e-6f) << "row " << r << " value " << i;
        diff += std::abs(got[i] - own[i]);
      }
      if (r % 2 == 1) {
        EXPECT_GT(diff, 0.1f) << "row " << r;
      }
    }
    // Every other tensor is byte for byte the unpaired one.
    for (const TensorInfo& t : f.plain->tensors()) {
      if (t.name == "token_embd.weight") continue;
      const TensorInfo* p = f.paired->FindTensor(t.name);
      ASSERT_NE(p, nullptr) << t.name;
      ASSERT_EQ(p->nbytes, t.nbytes) << t.name;
      EXPECT_EQ(std::memcmp(f.paired->TensorData(*p), f.plain->TensorData(t), t.nbytes), 0)
          << t.name;
    }
  }
}

}  // namespace
}  // namespace tandem
