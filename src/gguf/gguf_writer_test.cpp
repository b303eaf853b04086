// GgufWriter: write → read round trips of every value type and tensor bytes, layout, failures.
#include "gguf/gguf_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/error.h"
#include "base/mapped_file.h"
#include "gguf/gguf_reader.h"

namespace tandem {
namespace {

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + name;
}

bool Exists(const std::string& path) {
  return std::filesystem::exists(path);
}

std::vector<uint8_t> Iota(size_t n, uint8_t start) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(start + i * 7);
  return v;
}

// One key of every type, including arrays of every element type and an empty array.
void SetEveryType(GgufWriter& w) {
  w.SetString("general.architecture", "test");
  w.Set("t.u8", GgufValue::U8(250));
  w.Set("t.i8", GgufValue::I8(-100));
  w.Set("t.u16", GgufValue::U16(60000));
  w.Set("t.i16", GgufValue::I16(-30000));
  w.SetU32("t.u32", 4000000000u);
  w.SetI32("t.i32", -2000000000);
  w.SetF32("t.f32", 3.25f);
  w.SetBool("t.bool", true);
  w.SetString("t.string", std::string("with\0nul", 8));
  w.SetU64("t.u64", ~uint64_t{0});
  w.Set("t.i64", GgufValue::I64(INT64_MIN));
  w.Set("t.f64", GgufValue::F64(-1e300));
  w.Set("a.u8", GgufValue::Array<uint8_t>(std::vector<uint8_t>{1, 2, 255}));
  w.Set("a.i8", GgufValue::Array<int8_t>(std::vector<int8_t>{-1, 2}));
  w.Set("a.u16", GgufValue::Array<uint16_t>(std::vector<uint16_t>{7}));
  w.Set("a.i16", GgufValue::Array<int16_t>(std::vector<int16_t>{-7, 8}));
  w.Set("a.u32", GgufValue::Array<uint32_t>(std::vector<uint32_t>{256, 512}));
  w.Set("a.i32", GgufValue::Array<int32_t>(std::vector<int32_t>{-1, 0, 1}));
  w.Set("a.f32", GgufValue::Array<float>(std::vector<float>{0.5f, -0.0f}));
  w.Set("a.bool", GgufValue::BoolArray({true, false, true}));
  w.Set("a.string", GgufValue::StringArray(std::vector<std::string>{"<pad>", "", "▁the"}));
  w.Set("a.u64", GgufValue::Array<uint64_t>(std::vector<uint64_t>{1ull << 63}));
  w.Set("a.i64", GgufValue::Array<int64_t>(std::vector<int64_t>{-5}));
  w.Set("a.f64", GgufValue::Array<double>(std::vector<double>{2.5, 1e-300}));
  w.Set("a.empty", GgufValue::Array<int32_t>(std::vector<int32_t>{}));
}

TEST(GgufWriter, RoundTripsEveryTypeAndTensorBytes) {
  GgufWriter w;
  SetEveryType(w);
  std::vector<uint8_t> a = Iota(4 * 6, 1);       // f32 [3, 2]
  std::vector<uint8_t> q = Iota(34 * 2 * 3, 9);  // q8_0 [64, 3]
  const uint64_t ne_a[] = {3, 2};
  const uint64_t ne_q[] = {64, 3};
  w.AddTensor("a", TensorType::kF32, ne_a, a);
  w.AddTensor("q", TensorType::kQ8_0, ne_q, [&q](const GgufByteSink& sink) {
    for (size_t row = 0; row < 3; ++row) sink(std::span(q).subspan(row * 68, 68));
  });
  const uint64_t ne_s[] = {1};
  w.AddTensor("s", TensorType::kI32, ne_s, std::vector<uint8_t>{1, 2, 3, 4});

  std::string path = TempPath("gguf_round_trip.gguf");
  w.Write(path);
  EXPECT_FALSE(Exists(path + ".tmp"));
  auto f = GgufFile::Open(path);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_TRUE(f->metadata() == w.metadata());
  ASSERT_EQ(f->metadata().entries().size(), w.metadata().entries().size());
  for (size_t i = 0; i < f->metadata().size(); ++i) {
    EXPECT_EQ(f->metadata().entries()[i].key, w.metadata().entries()[i].key);
  }
  EXPECT_EQ(f->GetString("t.string").size(), 8u);
  EXPECT_EQ(f->Find("t.i64")->As<int64_t>(), INT64_MIN);
  EXPECT_EQ(f->GetStringArray("a.string")[2], "▁the");

  ASSERT_EQ(f->tensors().size(), 3u);
  EXPECT_EQ(f->tensors()[0].name, "a");
  EXPECT_EQ(f->tensors()[1].name, "q");
  const TensorInfo& ta = f->tensors()[0];
  const TensorInfo& tq = f->tensors()[1];
  const TensorInfo& ts = f->tensors()[2];
  EXPECT_EQ(ta.n_dims, 2u);
  EXPECT_EQ(ta.ne[1], 2u);
  EXPECT_EQ(tq.type, TensorType::kQ8_0);
  std::span<const uint8_t> ba = f->TensorBytes(ta), bq = f->TensorBytes(tq);
  EXPECT_EQ(std::vector<uint8_t>(ba.begin(), ba.end()), a);
  EXPECT_EQ(std::vector<uint8_t>(bq.begin(), bq.end()), q);
  // llama.cpp's packing: offsets follow each other, each padded to 32, and so is the last one.
  EXPECT_EQ(ta.offset, f->data_offset());
  EXPECT_EQ(tq.offset, ta.offset + 32);
  EXPECT_EQ(ts.offset, tq.offset + 224);
  EXPECT_EQ(f->file_size(), ts.offset + 32);
  std::filesystem::remove(path);
}

TEST(GgufWriter, PadsWithZerosToCustomAlignment) {
  GgufWriter w;
  w.SetU32("general.alignment", 64);
  const uint64_t ne[] = {5};
  w.AddTensor("x", TensorType::kI8, ne, std::vector<uint8_t>{9, 9, 9, 9, 9});
  w.AddTensor("y", TensorType::kI8, ne, std::vector<uint8_t>{8, 8, 8, 8, 8});
  std::string path = TempPath("gguf_align64.gguf");
  w.Write(path);
  auto f = GgufFile::Open(path);
  EXPECT_EQ(f->alignment(), 64u);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  EXPECT_EQ(f->tensors()[1].offset, f->tensors()[0].offset + 64);
  EXPECT_EQ(f->file_size(), f->data_offset() + 128);
  MappedFile raw(path);
  for (size_t i = 5; i < 64; ++i) EXPECT_EQ(raw.data()[f->data_offset() + i], 0) << i;
  std::filesystem::remove(path);
}

TEST(GgufWriter, RejectsBadTensors) {
  GgufWriter w;
  const uint64_t ne[] = {4};
  const uint64_t ne_q[] = {33};
  const uint64_t ne5[] = {1, 1, 1, 1, 1};
  EXPECT_THROW(w.AddTensor("", TensorType::kF32, ne, std::vector<uint8_t>(16)), Error);
  EXPECT_THROW(w.AddTensor(std::string(64, 'n'), TensorType::kF32, ne, std::vector<uint8_t>(16)),
               Error);
  EXPECT_THROW(w.AddTensor("q", TensorType::kQ8_0, ne_q, std::vector<uint8_t>(34)), Error);
  EXPECT_THROW(w.AddTensor("five", TensorType::kF32, ne5, std::vector<uint8_t>(4)), Error);
  EXPECT_THROW(w.AddTensor("short", TensorType::kF32, ne, std::vector<uint8_t>(15)), Error);
  w.AddTensor("ok", TensorType::kF32, ne, std::vector<uint8_t>(16));
  EXPECT_THROW(w.AddTensor("ok", TensorType::kF32, ne, std::vector<uint8_t>(16)), Error);
  EXPECT_EQ(w.tensor_count(), 1u);
  w.SetU32("general.alignment", 24);
  EXPECT_THROW(w.Write(TempPath("gguf_bad_alignment.gguf")), Error);
}

TEST(GgufWriter, FailedWriteLeavesExistingFileAlone) {
  std::string path = TempPath("gguf_keep.gguf");
  {
    std::ofstream out(path, std::ios::binary);
    out << "previous good file";
  }
  const uint64_t ne[] = {4};
  for (int bytes : {15, 17}) {
    GgufWriter w;
    w.AddTensor("t", TensorType::kF32, ne, [bytes](const GgufByteSink& sink) {
      std::vector<uint8_t> data(static_cast<size_t>(bytes));
      sink(data);
    });
    try {
      w.Write(path);
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("tensor 't' producer"), std::string::npos) << e.what();
    }
  }
  GgufWriter throwing;
  throwing.AddTensor("t", TensorType::kF32, ne,
                     [](const GgufByteSink&) { throw std::runtime_error("converter failed"); });
  EXPECT_THROW(throwing.Write(path), std::runtime_error);
  EXPECT_FALSE(Exists(path + ".tmp"));
  std::ifstream in(path);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "previous good file");
  EXPECT_THROW(GgufWriter().Write("/nonexistent/dir/x.gguf"), Error);
  std::filesystem::remove(path);
}

// ---- the llama.cpp fixture ----

std::string FixturePath(const char* name) {
  return std::string(TANDEM_SHARED_DIR) + "/fixtures/llamacpp-tiny/" + name;
}

#define SKIP_WITHOUT_FIXTURE(path) \
  if (!Exists(path)) GTEST_SKIP() << "fixture absent (needs ../shared): " << (path)

TEST(GgufFixture, ReadsTarget) {
  std::string path = FixturePath("tiny-gemma4-f32.gguf");
  SKIP_WITHOUT_FIXTURE(path);
  auto f = GgufFile::Open(path);
  EXPECT_EQ(f->GetString("general.architecture"), "gemma4");
  EXPECT_EQ(f->GetU32("gemma4.block_count"), 6u);
  EXPECT_EQ(f->GetU32("gemma4.embedding_length"), 128u);
  EXPECT_EQ(f->GetStringArray("tokenizer.ggml.tokens").size(), 512u);
  EXPECT_EQ(f->GetStringArray("tokenizer.ggml.tokens")[2], "<bos>");
  EXPECT_EQ(f->GetBoolPerLayer("gemma4.attention.sliding_window_pattern", 6),
            (std::vector<bool>{true, true, false, true, true, false}));
  EXPECT_EQ(f->GetU32PerLayer("gemma4.feed_forward_length", 6),
            (std::vector<uint32_t>{256, 256, 256, 512, 512, 512}));
  EXPECT_EQ(f->GetU32PerLayer("gemma4.attention.head_count_kv", 6), (std::vector<uint32_t>(6, 1)));
  EXPECT_EQ(f->tensors().size(), 99u);
  const TensorInfo* embd = f->FindTensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, TensorType::kF32);
  EXPECT_EQ(embd->ne[0], 128u);
  EXPECT_EQ(embd->ne[1], 512u);
  EXPECT_EQ(embd->nbytes, 128u * 512u * 4u);
}

TEST(GgufFixture, ReadsAssistant) {
  std::string path = FixturePath("tiny-gemma4-assistant-f32.gguf");
  SKIP_WITHOUT_FIXTURE(path);
  auto f = GgufFile::Open(path);
  EXPECT_EQ(f->GetString("general.architecture"), "gemma4-assistant");
  EXPECT_EQ(f->GetBoolPerLayer("gemma4-assistant.attention.sliding_window_pattern", 4),
            (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(f->tensors().size(), 49u);
}

// Copies every KV and tensor through GgufWriter; the copy must re-read with identical metadata and
// tensor bytes (and, since llama.cpp packs tensors the same way, be byte-identical).
void CheckCopy(const std::string& path, const std::string& copy_path) {
  auto f = GgufFile::Open(path);
  GgufWriter w;
  w.CopyMetadata(f->metadata());
  for (const TensorInfo& t : f->tensors()) w.AddTensorFrom(*f, t);
  w.Write(copy_path);
  auto g = GgufFile::Open(copy_path);
  EXPECT_TRUE(g->metadata() == f->metadata());
  ASSERT_EQ(g->tensors().size(), f->tensors().size());
  for (size_t i = 0; i < f->tensors().size(); ++i) {
    const TensorInfo& a = f->tensors()[i];
    const TensorInfo& b = g->tensors()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.n_dims, b.n_dims);
    EXPECT_EQ(a.ne, b.ne);
    ASSERT_EQ(a.nbytes, b.nbytes);
    EXPECT_EQ(std::memcmp(f->TensorData(a), g->TensorData(b), a.nbytes), 0) << a.name;
  }
  MappedFile x(path), y(copy_path);
  EXPECT_EQ(x.size(), y.size());
  EXPECT_TRUE(x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size()) == 0);
  std::filesystem::remove(copy_path);
}

TEST(GgufFixture, CopyThroughWriterIsIdentical) {
  std::string target = FixturePath("tiny-gemma4-f32.gguf");
  SKIP_WITHOUT_FIXTURE(target);
  CheckCopy(target, TempPath("gguf_copy_target.gguf"));
  CheckCopy(FixturePath("tiny-gemma4-assistant-f32.gguf"), TempPath("gguf_copy_assistant.gguf"));
}

}  // namespace
}  // namespace tandem
