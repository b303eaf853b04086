// The trained pair in models/ is reproducible from its shipped Hugging Face export: tandem convert
// (to f32) then tandem quantize (Q8_0) — the steps tools/train/export.py ran — rebuild the
// shipped GGUFs byte for byte.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "convert/converter.h"
#include "convert/quantizer.h"

namespace tandem {
namespace {

const std::string kModels = std::string(TANDEM_SOURCE_DIR) + "/models/";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void ExpectReproduced(const std::string& hf_dir, const std::string& name) {
  const std::string shipped = kModels + name + "-Q8_0.gguf";
  if (!std::filesystem::exists(kModels + hf_dir + "/config.json") ||
      !std::filesystem::exists(shipped)) {
    GTEST_SKIP() << "shipped pair absent: " << kModels + hf_dir << ", " << shipped;
  }
  const std::string tmp = testing::TempDir() + "shipped_" + name;
  ConvertOptions convert;
  convert.input_dir = kModels + hf_dir;
  convert.output_path = tmp + "-f32.gguf";
  convert.out_type = TensorType::kF32;
  convert.name = name;
  convert.progress = false;
  ConvertHfToGguf(convert);
  QuantizeOptions quantize;
  quantize.preset = QuantPreset::kQ8_0;
  quantize.progress = false;
  QuantizeGguf(tmp + "-f32.gguf", tmp + "-Q8_0.gguf", quantize);
  const std::string rebuilt = ReadAll(tmp + "-Q8_0.gguf");
  EXPECT_EQ(rebuilt.size(), std::filesystem::file_size(shipped));
  EXPECT_TRUE(rebuilt == ReadAll(shipped)) << name << ": rebuilt GGUF differs from " << shipped;
  std::filesystem::remove(tmp + "-f32.gguf");
  std::filesystem::remove(tmp + "-Q8_0.gguf");
}

TEST(ShippedPair, TargetIsReproducedFromItsHfExport) {
  ExpectReproduced("hf/target", "tandem-gemma4-tiny");
}

TEST(ShippedPair, AssistantIsReproducedFromItsHfExport) {
  ExpectReproduced("hf/assistant", "tandem-gemma4-tiny-assistant");
}

}  // namespace
}  // namespace tandem
