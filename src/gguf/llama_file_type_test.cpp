// Tests for the llama_ftype values and names (docs/formats.md § File types).
#include "gguf/llama_file_type.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(LlamaFileTypeTest, NamesLlamaCppsNumbers) {
  EXPECT_EQ(LlamaFileTypeName(0), "ALL_F32");
  EXPECT_EQ(LlamaFileTypeName(1), "F16");
  EXPECT_EQ(LlamaFileTypeName(7), "Q8_0");
  EXPECT_EQ(LlamaFileTypeName(10), "Q2_K");
  EXPECT_EQ(LlamaFileTypeName(11), "Q3_K_S");
  EXPECT_EQ(LlamaFileTypeName(13), "Q3_K_L");
  EXPECT_EQ(LlamaFileTypeName(15), "Q4_K_M");
  EXPECT_EQ(LlamaFileTypeName(16), "Q5_K_S");
  EXPECT_EQ(LlamaFileTypeName(25), "IQ4_NL");
  EXPECT_EQ(LlamaFileTypeName(30), "IQ4_XS");
  EXPECT_EQ(LlamaFileTypeName(32), "BF16");
  EXPECT_EQ(LlamaFileTypeName(38), "MXFP4_MOE");
  for (uint32_t removed : {4u, 5u, 6u, 33u, 34u, 35u, 39u, 1024u}) {
    EXPECT_FALSE(LlamaFileTypeName(removed).has_value()) << removed;
  }
}

TEST(LlamaFileTypeTest, ValueForFilesOfOneType) {
  EXPECT_EQ(LlamaFileType(TensorType::kF32), 0u);
  EXPECT_EQ(LlamaFileType(TensorType::kQ2_K), 10u);
  EXPECT_EQ(LlamaFileType(TensorType::kQ3_K), 12u);
  EXPECT_EQ(LlamaFileType(TensorType::kIQ4_NL), 25u);
  EXPECT_EQ(LlamaFileType(TensorType::kIQ4_XS), 30u);
  EXPECT_EQ(LlamaFileType(TensorType::kMXFP4), 1024u);
}

}  // namespace
}  // namespace tandem
