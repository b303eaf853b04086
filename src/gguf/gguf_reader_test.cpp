// GgufFile parsing: valid files, every rejected error class (message names field and offset),
// truncation at every byte.
#include "gguf/gguf_reader.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "base/error.h"
#include "gguf/gguf_test_bytes.h"

namespace tandem {
namespace {

using testing_util::GgufBytes;

constexpr uint32_t kU8 = 0, kU32 = 4, kBool = 7, kString = 8, kArray = 9, kU64 = 10;
constexpr uint32_t kTypeF32 = 0, kTypeQ8_0 = 8;
constexpr size_t kHeaderBytes = 24;

std::unique_ptr<GgufFile> Parse(const GgufBytes& b) {
  return GgufFile::FromBytes(b.bytes(), "test.gguf");
}

// Parsing `b` must throw Error(kind) whose message contains every one of `parts`.
void ExpectError(const GgufBytes& b, ErrorKind kind, std::initializer_list<std::string> parts) {
  try {
    Parse(b);
    FAIL() << "expected an error containing '" << *parts.begin() << "'";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.kind(), kind) << msg;
    EXPECT_EQ(msg.rfind("test.gguf: ", 0), 0u) << msg;
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << msg;
  }
}

// The position part of a message: " at byte N: ".
std::string At(size_t offset) {
  return " at byte " + std::to_string(offset) + ": ";
}

// One u32 KV, one string KV, two f32 tensors [4] and [8, 2]; data padded to 32.
GgufBytes SmallFile() {
  GgufBytes b;
  b.Header(3, 2, 2);
  b.Key("general.architecture", kString).Str("test");
  b.Key("test.block_count", kU32).U32(6);
  const uint64_t ne_a[] = {4};
  const uint64_t ne_b[] = {8, 2};
  b.TensorInfo("a", ne_a, kTypeF32, 0);
  b.TensorInfo("b", ne_b, kTypeF32, 32);
  b.Pad(32);
  for (int i = 0; i < 4; ++i) b.F32(static_cast<float>(i));
  b.Pad(32);
  for (int i = 0; i < 16; ++i) b.F32(static_cast<float>(100 + i));
  return b;
}

TEST(GgufReader, ParsesSmallFile) {
  GgufBytes b = SmallFile();
  auto f = Parse(b);
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->file_size(), b.size());
  EXPECT_EQ(f->data_offset() % 32, 0u);
  EXPECT_EQ(f->GetString("general.architecture"), "test");
  EXPECT_EQ(f->GetU32("test.block_count"), 6u);
  ASSERT_EQ(f->tensors().size(), 2u);
  const TensorInfo* a = f->FindTensor("a");
  const TensorInfo* t = f->FindTensor("b");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(f->FindTensor("c"), nullptr);
  EXPECT_EQ(a->type, TensorType::kF32);
  EXPECT_EQ(a->n_dims, 1u);
  EXPECT_EQ(a->ne[0], 4u);
  EXPECT_EQ(a->ne[1], 1u);
  EXPECT_EQ(a->offset, f->data_offset());
  EXPECT_EQ(a->nbytes, 16u);
  EXPECT_EQ(t->n_dims, 2u);
  EXPECT_EQ(t->n_elements(), 16u);
  EXPECT_EQ(t->offset, f->data_offset() + 32);
  EXPECT_EQ(t->nbytes, 64u);
  float x;
  std::memcpy(&x, f->TensorData(*t) + 4 * 15, 4);
  EXPECT_EQ(x, 115.0f);
  EXPECT_EQ(f->TensorBytes(*a).size(), 16u);
}

TEST(GgufReader, AcceptsVersion2AndNoTensors) {
  GgufBytes b;
  b.Header(2, 0, 1).Key("k", kU8).U8(7);
  auto f = Parse(b);
  EXPECT_EQ(f->version(), 2u);
  EXPECT_EQ(f->tensors().size(), 0u);
  EXPECT_EQ(f->Find("k")->As<uint8_t>(), 7);
}

TEST(GgufReader, TruncationAtEveryByteThrows) {
  GgufBytes b = SmallFile();  // its last tensor ends exactly at the end of the file
  const std::vector<uint8_t>& full = b.bytes();
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(GgufFile::FromBytes(cut, "cut.gguf"), Error) << "length " << n;
  }
  EXPECT_NO_THROW(GgufFile::FromBytes(full, "full.gguf"));
}

TEST(GgufReader, RejectsBadMagic) {
  GgufBytes b;
  b.Raw(std::vector<uint8_t>{'G', 'G', 'M', 'L'}).U32(3).U64(0).U64(0);
  ExpectError(b, ErrorKind::kCorrupt, {"magic", At(0), "not a GGUF file"});
}

TEST(GgufReader, RejectsVersions) {
  ExpectError(GgufBytes().Header(0, 0, 0), ErrorKind::kCorrupt, {"version", At(4), "invalid"});
  ExpectError(GgufBytes().Header(1, 0, 0), ErrorKind::kUnsupported, {"version", At(4), "1"});
  ExpectError(GgufBytes().Header(4, 0, 0), ErrorKind::kUnsupported, {"version", At(4), "4"});
  ExpectError(GgufBytes().Header(0x03000000, 0, 0), ErrorKind::kUnsupported,
              {"version", At(4), "byte-swapped"});
}

TEST(GgufReader, RejectsImpossibleCounts) {
  ExpectError(GgufBytes().Header(3, 0, uint64_t{1} << 60), ErrorKind::kCorrupt,
              {"kv_count", At(16), "cannot fit"});
  ExpectError(GgufBytes().Header(3, uint64_t{1} << 60, 0), ErrorKind::kCorrupt,
              {"tensor_count", At(8), "cannot fit"});
  ExpectError(GgufBytes().Header(3, ~uint64_t{0}, 0), ErrorKind::kCorrupt,
              {"tensor_count", At(8), "negative"});
}

TEST(GgufReader, RejectsHugeArrayAndStringLengths) {
  GgufBytes b;
  b.Header(3, 0, 1).Key("k", kArray).U32(kU32);
  size_t at = b.size();
  b.U64(uint64_t{1} << 60).U32(1);
  ExpectError(b, ErrorKind::kCorrupt, {"kv[0] 'k' value count", At(at), "cannot fit"});

  GgufBytes s;
  s.Header(3, 0, 1).Key("k", kArray).U32(kString);
  at = s.size();
  s.U64(~uint64_t{0} / 2);
  ExpectError(s, ErrorKind::kCorrupt, {"kv[0] 'k' value count", At(at), "strings cannot fit"});

  GgufBytes t;
  t.Header(3, 0, 1).Key("k", kString);
  at = t.size();
  t.U64(uint64_t{1} << 62).Raw(std::vector<uint8_t>{'x'});
  ExpectError(t, ErrorKind::kCorrupt, {"kv[0] 'k' value", At(at), "string length"});
}

TEST(GgufReader, RejectsUnknownValueTypes) {
  GgufBytes b;
  b.Header(3, 0, 1);
  size_t at = b.size() + 8 + 1;
  b.Key("k", 13).U32(0);
  ExpectError(b, ErrorKind::kCorrupt, {"kv[0] 'k' type", At(at), "unknown value type id 13"});

  GgufBytes a;
  a.Header(3, 0, 1).Key("k", kArray);
  at = a.size();
  a.U32(99).U64(0);
  ExpectError(a, ErrorKind::kCorrupt, {"kv[0] 'k' value element type", At(at), "99"});
}

TEST(GgufReader, RejectsNestedArrays) {
  GgufBytes b;
  b.Header(3, 0, 1).Key("k", kArray);
  size_t at = b.size();
  b.U32(kArray).U64(1).U32(kU8).U64(0);
  ExpectError(b, ErrorKind::kUnsupported, {"kv[0] 'k' value element type", At(at), "nested"});
}

TEST(GgufReader, RejectsDuplicateAndEmptyKeys) {
  GgufBytes b;
  b.Header(3, 0, 2).Key("a.b", kU32).U32(1);
  size_t at = b.size();
  b.Key("a.b", kU32).U32(2);
  ExpectError(b, ErrorKind::kCorrupt, {"kv[1] 'a.b'", At(at), "duplicate key"});

  GgufBytes e;
  e.Header(3, 0, 1);
  e.Key("", kU32).U32(1);
  ExpectError(e, ErrorKind::kCorrupt, {"kv[0] key", At(kHeaderBytes), "empty key"});
}

TEST(GgufReader, RejectsBadBools) {
  GgufBytes b;
  b.Header(3, 0, 1).Key("flag", kBool);
  size_t at = b.size();
  b.U8(2);
  ExpectError(b, ErrorKind::kCorrupt, {"kv[0] 'flag' value", At(at), "bool is 2"});

  GgufBytes a;
  a.Header(3, 0, 1).Key("flags", kArray).U32(kBool).U64(3);
  at = a.size();
  a.U8(1).U8(0).U8(255);
  ExpectError(a, ErrorKind::kCorrupt, {"kv[0] 'flags' value[2]", At(at + 2), "bool is 255"});
}

TEST(GgufReader, ChecksAlignmentKey) {
  auto file_with = [](uint32_t type, uint64_t value) {
    GgufBytes b;
    b.Header(3, 0, 1).Key("general.alignment", type);
    if (type == kU64)
      b.U64(value);
    else
      b.U32(static_cast<uint32_t>(value));
    return b;
  };
  size_t at = kHeaderBytes + 8 + 17 + 4;
  ExpectError(file_with(kU64, 64), ErrorKind::kCorrupt,
              {"kv[0] 'general.alignment' value", At(at), "expected u32"});
  ExpectError(file_with(kU32, 48), ErrorKind::kCorrupt, {At(at), "not a power of two"});
  ExpectError(file_with(kU32, 0), ErrorKind::kCorrupt, {At(at), "not a power of two"});
  EXPECT_EQ(Parse(file_with(kU32, 64))->alignment(), 64u);
}

TEST(GgufReader, HonoursAlignment) {
  GgufBytes b;
  b.Header(3, 2, 1).Key("general.alignment", kU32).U32(64);
  const uint64_t ne[] = {4};
  b.TensorInfo("a", ne, kTypeF32, 0).TensorInfo("b", ne, kTypeF32, 64).Pad(64);
  b.Zeros(64).Zeros(16);
  auto f = Parse(b);
  EXPECT_EQ(f->data_offset() % 64, 0u);
  EXPECT_EQ(f->FindTensor("b")->offset, f->data_offset() + 64);

  GgufBytes m;
  m.Header(3, 1, 1).Key("general.alignment", kU32).U32(64);
  size_t at = m.size() + 8 + 1 + 4 + 8 + 4;
  m.TensorInfo("a", ne, kTypeF32, 32).Pad(64).Zeros(64);
  ExpectError(m, ErrorKind::kCorrupt,
              {"tensor 'a' offset", At(at), "not a multiple of the alignment 64"});
}

// A file with one tensor info whose fields the caller chooses; data is `data_bytes` zeros.
GgufBytes OneTensor(std::string_view name, std::span<const uint64_t> ne, uint32_t type,
                    uint64_t offset, size_t data_bytes, size_t* info_at) {
  GgufBytes b;
  b.Header(3, 1, 0);
  *info_at = b.size();
  b.TensorInfo(name, ne, type, offset).Pad(32).Zeros(data_bytes);
  return b;
}

TEST(GgufReader, RejectsBadTensorInfos) {
  size_t at = 0;
  const uint64_t ne4[] = {4};
  std::string long_name(64, 'x');
  ExpectError(OneTensor(long_name, ne4, kTypeF32, 0, 16, &at), ErrorKind::kCorrupt,
              {"tensor[0] name", At(kHeaderBytes), "64 bytes, the limit is 63"});
  EXPECT_NO_THROW(Parse(OneTensor(std::string(63, 'x'), ne4, kTypeF32, 0, 16, &at)));

  const uint64_t ne5[] = {1, 1, 1, 1, 1};
  ExpectError(OneTensor("t", ne5, kTypeF32, 0, 4, &at), ErrorKind::kCorrupt,
              {"tensor 't' n_dims", At(kHeaderBytes + 9), "5 dimensions"});

  const uint64_t negative[] = {4, uint64_t{1} << 63};
  ExpectError(OneTensor("t", negative, kTypeF32, 0, 16, &at), ErrorKind::kCorrupt,
              {"tensor 't' ne[1]", At(kHeaderBytes + 9 + 4 + 8), "negative"});

  const uint64_t overflow[] = {uint64_t{1} << 32, uint64_t{1} << 32};
  ExpectError(OneTensor("t", overflow, kTypeF32, 0, 16, &at), ErrorKind::kCorrupt,
              {"tensor 't' ne[1]", At(kHeaderBytes + 9 + 4 + 8), "overflows"});

  const size_t type_at = kHeaderBytes + 9 + 4 + 8;
  ExpectError(OneTensor("blk.0.attn_q.weight", ne4, 4, 0, 16, &at), ErrorKind::kUnsupported,
              {"tensor 'blk.0.attn_q.weight' type", At(type_at + 18), "tensor type id 4"});
  ExpectError(OneTensor("t", ne4, 99, 0, 16, &at), ErrorKind::kUnsupported,
              {"tensor 't' type", At(type_at), "99"});

  const uint64_t ne33[] = {33, 2};
  ExpectError(
      OneTensor("t", ne33, kTypeQ8_0, 0, 128, &at), ErrorKind::kCorrupt,
      {"tensor 't' ne[0]", At(kHeaderBytes + 9 + 4), "not a multiple of the q8_0 block size 32"});

  const uint64_t ne_big[] = {64};
  ExpectError(OneTensor("t", ne_big, kTypeF32, 0, 255, &at), ErrorKind::kCorrupt,
              {"tensor 't' offset", At(type_at + 4), "extend past the end of the file"});
  ExpectError(OneTensor("t", ne4, kTypeF32, 4, 16, &at), ErrorKind::kCorrupt,
              {"tensor 't' offset", At(type_at + 4), "not a multiple of the alignment 32"});
  // 2^64 - 32 is aligned, and data_offset + it wraps around.
  ExpectError(OneTensor("t", ne4, kTypeF32, ~uint64_t{0} - 31, 16, &at), ErrorKind::kCorrupt,
              {"tensor 't' offset", At(type_at + 4), "extend past the end of the file"});
}

TEST(GgufReader, RejectsDuplicateTensorNames) {
  GgufBytes b;
  b.Header(3, 2, 0);
  const uint64_t ne[] = {4};
  b.TensorInfo("w", ne, kTypeF32, 0);
  size_t at = b.size();
  b.TensorInfo("w", ne, kTypeF32, 32).Pad(32).Zeros(48);
  ExpectError(b, ErrorKind::kCorrupt, {"tensor 'w'", At(at), "duplicate tensor name"});
}

TEST(GgufReader, RejectsOverlappingTensors) {
  GgufBytes b;
  b.Header(3, 3, 0);
  const uint64_t ne_a[] = {16};
  const uint64_t ne_b[] = {4};
  const uint64_t ne_zero[] = {0};
  b.TensorInfo("a", ne_a, kTypeF32, 32);  // [32, 96)
  b.TensorInfo("empty", ne_zero, kTypeF32, 0);
  size_t at = b.size() + 8 + 1 + 4 + 8 + 4;
  b.TensorInfo("b", ne_b, kTypeF32, 64);  // [64, 80) overlaps a
  b.Pad(32).Zeros(128);
  ExpectError(b, ErrorKind::kCorrupt, {"tensor 'b' offset", At(at), "overlaps tensor 'a'"});
}

TEST(GgufReader, AcceptsZeroSizeAndUnpackedTensors) {
  GgufBytes b;
  b.Header(3, 3, 0);
  const uint64_t ne_zero[] = {0, 5};
  const uint64_t ne[] = {4};
  b.TensorInfo("z", ne_zero, kTypeQ8_0, 32);
  b.TensorInfo("late", ne, kTypeF32, 64);
  b.TensorInfo("early", ne, kTypeF32, 0);
  b.Pad(32).Zeros(80);
  auto f = Parse(b);
  EXPECT_EQ(f->FindTensor("z")->nbytes, 0u);
  EXPECT_EQ(f->FindTensor("late")->offset, f->data_offset() + 64);
}

TEST(GgufReader, EscapesGarbageKeysInMessages) {
  GgufBytes b;
  b.Header(3, 0, 1);
  b.Key(std::string_view("a\nb\x01", 4), 200);
  ExpectError(b, ErrorKind::kCorrupt, {"kv[0] 'a\\nb\\x01' type"});
}

TEST(GgufReader, OpenReportsMissingFile) {
  try {
    GgufFile::Open("/nonexistent/model.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos);
  }
}

TEST(GgufReader, AccessorErrorsNameKeyAndTypes) {
  auto f = Parse(SmallFile());
  try {
    f->GetString("test.block_count");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_STREQ(e.what(), "test.gguf: key 'test.block_count' has type u32, expected string");
  }
  try {
    f->GetU32("missing.key");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_STREQ(e.what(), "test.gguf: key 'missing.key' not found");
  }
  EXPECT_THROW(f->GetI32("test.block_count"), Error);
  EXPECT_FALSE(f->FindU32("missing.key").has_value());
  EXPECT_EQ(f->FindU32("test.block_count").value(), 6u);
  EXPECT_THROW(f->FindF32("test.block_count"), Error);
}

}  // namespace
}  // namespace tandem
