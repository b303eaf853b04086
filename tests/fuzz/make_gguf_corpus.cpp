// Writes the seed corpus of fuzz_gguf_reader: small valid GGUF files (valid_*) made with
// GgufWriter, and a few broken ones (bad_*). Usage: make_gguf_corpus OUTPUT_DIR
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_test_bytes.h"
#include "gguf/gguf_writer.h"

namespace tandem {
namespace {

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 13);
  return v;
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) Fail(ErrorKind::kIo, path + ": write failed");
}

// Every value type, and tensors of a 1-value, a 32-value and a 256-value block type.
void WriteAllTypes(const std::string& path) {
  GgufWriter w;
  w.SetString("general.architecture", "fuzz");
  w.Set("k.u8", GgufValue::U8(1));
  w.Set("k.i8", GgufValue::I8(-1));
  w.Set("k.u16", GgufValue::U16(2));
  w.Set("k.i16", GgufValue::I16(-2));
  w.SetU32("k.u32", 3);
  w.SetI32("k.i32", -3);
  w.SetF32("k.f32", 0.5f);
  w.SetBool("k.bool", true);
  w.SetU64("k.u64", 4);
  w.Set("k.i64", GgufValue::I64(-4));
  w.Set("k.f64", GgufValue::F64(0.25));
  w.Set("a.str", GgufValue::StringArray(std::vector<std::string>{"a", "bc", ""}));
  w.Set("a.i32", GgufValue::Array<int32_t>(std::vector<int32_t>{1, -1}));
  w.Set("a.bool", GgufValue::BoolArray({true, false}));
  w.Set("a.f64", GgufValue::Array<double>(std::vector<double>{1.0}));
  const uint64_t ne_f32[] = {4, 2};
  const uint64_t ne_q8[] = {32};
  const uint64_t ne_q4k[] = {256};
  w.AddTensor("f", TensorType::kF32, ne_f32, Bytes(32, 1));
  w.AddTensor("q8", TensorType::kQ8_0, ne_q8, Bytes(34, 2));
  w.AddTensor("q4k", TensorType::kQ4_K, ne_q4k, Bytes(144, 3));
  w.Write(path);
}

// Gemma-4-like keys: per-layer arrays, a small vocabulary, blk.N tensors.
void WriteGemmaLike(const std::string& path) {
  GgufWriter w;
  w.SetString("general.architecture", "gemma4");
  w.SetU32("gemma4.block_count", 3);
  w.Set("gemma4.feed_forward_length", GgufValue::Array<int32_t>(std::vector<int32_t>{8, 8, 16}));
  w.SetU32("gemma4.attention.head_count_kv", 1);
  w.Set("gemma4.attention.sliding_window_pattern", GgufValue::BoolArray({true, true, false}));
  w.SetF32("gemma4.rope.freq_base", 1e6f);
  std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>", "<unk>", "▁a", "▁the", "b", "c"};
  w.Set("tokenizer.ggml.tokens", GgufValue::StringArray(tokens));
  w.Set("tokenizer.ggml.scores", GgufValue::Array<float>(std::vector<float>(tokens.size(), 0.f)));
  for (int l = 0; l < 3; ++l) {
    const uint64_t ne[] = {4};
    w.AddTensor("blk." + std::to_string(l) + ".attn_norm.weight", TensorType::kF32, ne,
                Bytes(16, static_cast<uint8_t>(l)));
  }
  const uint64_t ne_embd[] = {4, 8};
  w.AddTensor("token_embd.weight", TensorType::kF16, ne_embd, Bytes(64, 9));
  w.Write(path);
}

void WriteAligned64(const std::string& path) {
  GgufWriter w;
  w.SetU32("general.alignment", 64);
  const uint64_t ne[] = {3};
  w.AddTensor("x", TensorType::kI8, ne, Bytes(3, 4));
  w.AddTensor("y", TensorType::kI16, ne, Bytes(6, 5));
  w.Write(path);
}

void Run(const std::string& dir) {
  WriteAllTypes(dir + "/valid_all_types.gguf");
  WriteGemmaLike(dir + "/valid_gemma_like.gguf");
  WriteAligned64(dir + "/valid_align64.gguf");

  // Version 2, metadata only.
  GgufWriter meta;
  meta.SetString("general.name", "v2");
  meta.Write(dir + "/valid_v2_no_tensors.gguf");
  std::vector<uint8_t> v2 = ReadFile(dir + "/valid_v2_no_tensors.gguf");
  v2[4] = 2;
  WriteFile(dir + "/valid_v2_no_tensors.gguf", v2);

  std::vector<uint8_t> all = ReadFile(dir + "/valid_all_types.gguf");
  WriteFile(dir + "/bad_truncated.gguf", std::vector<uint8_t>(all.begin(), all.begin() + 300));

  testing_util::GgufBytes nested;
  nested.Header(3, 0, 1).Key("k", 9).U32(9).U64(1).U32(0).U64(0);
  WriteFile(dir + "/bad_nested_array.gguf", nested.bytes());

  testing_util::GgufBytes removed;
  const uint64_t ne[] = {32};
  removed.Header(3, 1, 0).TensorInfo("t", ne, 4, 0).Pad(32).Zeros(32);
  WriteFile(dir + "/bad_removed_type.gguf", removed.bytes());

  testing_util::GgufBytes overlap;
  overlap.Header(3, 2, 0).TensorInfo("a", ne, 0, 0).TensorInfo("b", ne, 0, 64).Pad(32).Zeros(192);
  WriteFile(dir + "/bad_overlap.gguf", overlap.bytes());
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    tandem::Run(argv[1]);
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
