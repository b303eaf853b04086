// GgufValue and GgufMetadata: typed access, type errors, per-layer scalar-or-array helpers.
#include "gguf/gguf_metadata.h"

#include <gtest/gtest.h>

#include <limits>

namespace tandem {
namespace {

template <typename T>
GgufValue ArrayOf(std::vector<T> v) {
  return GgufValue::Array<T>(v);
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(GgufValue, ScalarsKeepTypeAndValue) {
  EXPECT_EQ(GgufValue::U8(200).As<uint8_t>(), 200);
  EXPECT_EQ(GgufValue::I8(-5).As<int8_t>(), -5);
  EXPECT_EQ(GgufValue::U16(65535).As<uint16_t>(), 65535);
  EXPECT_EQ(GgufValue::I16(-300).As<int16_t>(), -300);
  EXPECT_EQ(GgufValue::U32(4000000000u).As<uint32_t>(), 4000000000u);
  EXPECT_EQ(GgufValue::I32(-7).As<int32_t>(), -7);
  EXPECT_EQ(GgufValue::F32(1.5f).As<float>(), 1.5f);
  EXPECT_TRUE(GgufValue::Bool(true).As<bool>());
  EXPECT_EQ(GgufValue::U64(1ull << 40).As<uint64_t>(), 1ull << 40);
  EXPECT_EQ(GgufValue::I64(-(1ll << 40)).As<int64_t>(), -(1ll << 40));
  EXPECT_EQ(GgufValue::F64(0.1).As<double>(), 0.1);
  EXPECT_EQ(GgufValue::String("hi").AsString(), "hi");
  EXPECT_EQ(GgufValue::I32(-7).type(), GgufType::kI32);
  EXPECT_EQ(GgufValue::I32(-7).size(), 1u);
}

TEST(GgufValue, WrongTypeThrows) {
  EXPECT_EQ(ErrorOf([] { GgufValue::U32(1).As<int32_t>(); }), "value has type u32, expected i32");
  EXPECT_THROW(GgufValue::U32(1).AsString(), Error);
  EXPECT_EQ(ErrorOf([] { ArrayOf<float>({1.0f}).At<int32_t>(0); }),
            "value has type array[f32], expected array[i32]");
  EXPECT_THROW(ArrayOf<float>({1.0f}).At<float>(1), Error);
  EXPECT_THROW(GgufValue::String("x").StringAt(0), Error);
}

TEST(GgufValue, ArraysOfEveryKind) {
  GgufValue f = ArrayOf<float>({1.0f, -2.5f});
  EXPECT_EQ(f.TypeName(), "array[f32]");
  EXPECT_EQ(f.size(), 2u);
  EXPECT_EQ(f.ToVector<float>(), (std::vector<float>{1.0f, -2.5f}));
  GgufValue b = GgufValue::BoolArray({true, false, true});
  EXPECT_EQ(b.ToVector<bool>(), (std::vector<bool>{true, false, true}));
  std::vector<std::string> words = {"a", "", "ccc"};
  GgufValue s = GgufValue::StringArray(words);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.StringAt(1), "");
  EXPECT_EQ(s.StringAt(2), "ccc");
  EXPECT_EQ(s.ToStringViews().size(), 3u);
  GgufValue empty = ArrayOf<int64_t>({});
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_TRUE(empty.ToVector<int64_t>().empty());
  EXPECT_THROW(GgufValue::NumericArrayFromBytes(GgufType::kString, {}), Error);
  EXPECT_THROW(GgufValue::NumericArrayFromBytes(GgufType::kU32, std::vector<uint8_t>(3)), Error);
  EXPECT_THROW(GgufValue::NumericArrayFromBytes(GgufType::kBool, std::vector<uint8_t>{0, 2}),
               Error);
}

TEST(GgufValue, ToStringAbbreviates) {
  EXPECT_EQ(ArrayOf<int32_t>({1, 2, 3, 4}).ToString(2), "[1, 2, ... (4 total)]");
  EXPECT_EQ(ArrayOf<int32_t>({1, 2}).ToString(0), "[1, 2]");
  EXPECT_EQ(GgufValue::String("a\"b\n").ToString(), "\"a\\\"b\\n\"");
  EXPECT_EQ(GgufValue::F32(0.1f).ToString(), "0.1");
  EXPECT_EQ(GgufValue::Bool(false).ToString(), "false");
  std::vector<std::string> words = {"x", "y"};
  EXPECT_EQ(GgufValue::StringArray(words).ToString(), "[\"x\", \"y\"]");
}

TEST(GgufMetadata, KeepsInsertionOrderAndReplacesInPlace) {
  GgufMetadata m("m.gguf");
  m.Set("b", GgufValue::U32(1));
  m.Set("a", GgufValue::U32(2));
  m.Set("b", GgufValue::String("x"));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.entries()[0].key, "b");
  EXPECT_EQ(m.GetString("b"), "x");
  EXPECT_TRUE(m.Remove("b"));
  EXPECT_FALSE(m.Remove("b"));
  EXPECT_EQ(m.entries()[0].key, "a");
  EXPECT_EQ(m.GetU32("a"), 2u);
  EXPECT_THROW(m.Set("", GgufValue::U32(0)), Error);
}

TEST(GgufMetadata, TypedGettersNameTheKey) {
  GgufMetadata m("m.gguf");
  m.Set("n", GgufValue::U32(3));
  m.Set("toks", GgufValue::StringArray(std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(ErrorOf([&] { m.GetString("n"); }), "m.gguf: key 'n' has type u32, expected string");
  EXPECT_EQ(ErrorOf([&] { m.GetF32Array("toks"); }),
            "m.gguf: key 'toks' has type array[string], expected array[f32]");
  EXPECT_EQ(ErrorOf([&] { m.GetBool("nope"); }), "m.gguf: key 'nope' not found");
  EXPECT_EQ(m.GetStringArray("toks")[1], "b");
  EXPECT_EQ(m.FindString("nope"), std::nullopt);
  EXPECT_THROW(m.FindBool("n"), Error);
}

TEST(GgufMetadata, U32PerLayerAcceptsScalarOrArray) {
  GgufMetadata m("m.gguf");
  m.Set("scalar", GgufValue::U32(8));
  m.Set("scalar_i64", GgufValue::I64(2));
  m.Set("arr_i32", ArrayOf<int32_t>({1, 2, 3}));
  m.Set("arr_u16", ArrayOf<uint16_t>({4, 5, 6}));
  m.Set("arr_short", ArrayOf<uint32_t>({1, 2}));
  m.Set("arr_negative", ArrayOf<int32_t>({1, -1, 3}));
  m.Set("arr_big", ArrayOf<uint64_t>({1, 1ull << 32, 3}));
  m.Set("arr_f32", ArrayOf<float>({1, 2, 3}));
  m.Set("negative", GgufValue::I32(-4));
  m.Set("text", GgufValue::String("x"));
  EXPECT_EQ(m.GetU32PerLayer("scalar", 3), (std::vector<uint32_t>{8, 8, 8}));
  EXPECT_EQ(m.GetU32PerLayer("scalar_i64", 2), (std::vector<uint32_t>{2, 2}));
  EXPECT_EQ(m.GetU32PerLayer("arr_i32", 3), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(m.GetU32PerLayer("arr_u16", 3), (std::vector<uint32_t>{4, 5, 6}));
  EXPECT_EQ(ErrorOf([&] { m.GetU32PerLayer("arr_short", 3); }),
            "m.gguf: key 'arr_short' has 2 elements, expected one per layer (3)");
  EXPECT_EQ(ErrorOf([&] { m.GetU32PerLayer("arr_negative", 3); }),
            "m.gguf: key 'arr_negative' element 1 (-1) is out of range for a per-layer count, "
            "expected [0, 2^32)");
  EXPECT_NE(ErrorOf([&] { m.GetU32PerLayer("arr_big", 3); }).find("element 1 (4294967296)"),
            std::string::npos);
  EXPECT_EQ(
      ErrorOf([&] { m.GetU32PerLayer("arr_f32", 3); }),
      "m.gguf: key 'arr_f32' has type array[f32], expected an integer or an array of integers");
  EXPECT_NE(ErrorOf([&] { m.GetU32PerLayer("negative", 3); }).find("value (-4)"),
            std::string::npos);
  EXPECT_THROW(m.GetU32PerLayer("text", 3), Error);
  EXPECT_THROW(m.GetU32PerLayer("missing", 3), Error);
}

TEST(GgufMetadata, BoolPerLayer) {
  GgufMetadata m("m.gguf");
  m.Set("pattern", GgufValue::BoolArray({true, true, false}));
  m.Set("all", GgufValue::Bool(true));
  m.Set("ints", ArrayOf<int32_t>({1, 1, 0}));
  EXPECT_EQ(m.GetBoolPerLayer("pattern", 3), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(m.GetBoolPerLayer("all", 2), (std::vector<bool>{true, true}));
  EXPECT_THROW(m.GetBoolPerLayer("pattern", 4), Error);
  EXPECT_EQ(ErrorOf([&] { m.GetBoolPerLayer("ints", 3); }),
            "m.gguf: key 'ints' has type array[i32], expected bool or array[bool]");
}

}  // namespace
}  // namespace tandem
