#include "gguf/llama_file_type.h"

#include <array>
#include <utility>

namespace tandem {

uint32_t LlamaFileType(TensorType type) {
  switch (type) {
    case TensorType::kF32:
      return 0;
    case TensorType::kF16:
      return 1;
    case TensorType::kQ4_0:
      return 2;
    case TensorType::kQ4_1:
      return 3;
    case TensorType::kQ8_0:
      return 7;
    case TensorType::kQ5_0:
      return 8;
    case TensorType::kQ5_1:
      return 9;
    case TensorType::kQ2_K:
      return 10;
    case TensorType::kQ3_K:
      return 12;
    case TensorType::kQ4_K:
      return 15;
    case TensorType::kQ5_K:
      return 17;
    case TensorType::kQ6_K:
      return 18;
    case TensorType::kIQ4_NL:
      return 25;
    case TensorType::kIQ4_XS:
      return 30;
    case TensorType::kBF16:
      return 32;
    default:
      return 1024;  // "guessed": no single llama ftype
  }
}

std::optional<std::string_view> LlamaFileTypeName(uint32_t id) {
  // Ids 4-6 and 33-35 were removed from llama.cpp; 39 and up are not settled yet.
  static constexpr std::array<std::pair<uint32_t, std::string_view>, 33> kNames = {{
      {0, "ALL_F32"},  {1, "F16"},      {2, "Q4_0"},       {3, "Q4_1"},    {7, "Q8_0"},
      {8, "Q5_0"},     {9, "Q5_1"},     {10, "Q2_K"},      {11, "Q3_K_S"}, {12, "Q3_K_M"},
      {13, "Q3_K_L"},  {14, "Q4_K_S"},  {15, "Q4_K_M"},    {16, "Q5_K_S"}, {17, "Q5_K_M"},
      {18, "Q6_K"},    {19, "IQ2_XXS"}, {20, "IQ2_XS"},    {21, "Q2_K_S"}, {22, "IQ3_XS"},
      {23, "IQ3_XXS"}, {24, "IQ1_S"},   {25, "IQ4_NL"},    {26, "IQ3_S"},  {27, "IQ3_M"},
      {28, "IQ2_S"},   {29, "IQ2_M"},   {30, "IQ4_XS"},    {31, "IQ1_M"},  {32, "BF16"},
      {36, "TQ1_0"},   {37, "TQ2_0"},   {38, "MXFP4_MOE"},
  }};
  for (const auto& [n, name] : kNames) {
    if (n == id) return name;
  }
  return std::nullopt;
}

}  // namespace tandem
