// Tests for the safetensors reader: header validation, tiling, dtypes, sharded checkpoints.
#include "convert/safetensors_reader.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "convert/safetensors_test_util.h"

namespace tandem {
namespace {

using testing::FloatBytes;
using testing::RawBytes;
using testing::SafetensorsBytes;
using testing::SafetensorsHeader;
using testing::StTensor;

std::vector<StTensor> TwoTensors() {
  return {{"a.weight", "F32", {2, 3}, FloatBytes({1, 2, 3, 4, 5, 6}, "F32")},
          {"b.weight", "BF16", {4}, FloatBytes({1.5f, -2, 0.25f, 8}, "BF16")}};
}

// Parses `bytes` and expects Error(kind) whose message contains `needle`.
void ExpectError(const std::vector<uint8_t>& bytes, ErrorKind kind, const std::string& needle) {
  try {
    SafetensorsFile::FromBytes(bytes, "x.safetensors");
    ADD_FAILURE() << "no error; expected one containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("x.safetensors", 0), 0u) << e.what();
  }
}

TEST(SafetensorsFileTest, ReadsTensorsDtypesAndMetadata) {
  std::vector<StTensor> t = TwoTensors();
  t.push_back({"c.ids", "I64", {3}, RawBytes(std::vector<int64_t>{7, 8, 9})});
  t.push_back({"d.scalar", "F16", {}, FloatBytes({0.5f}, "F16")});
  t.push_back({"e.empty", "F32", {0, 4}, {}});
  const auto bytes = SafetensorsBytes(t, SafetensorsHeader(t, {{"format", "pt"}}));
  auto f = SafetensorsFile::FromBytes(bytes, "x.safetensors");
  ASSERT_EQ(f->tensors().size(), 5u);
  const SafetensorsTensor* a = f->Find("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, SafetensorsDtype::kF32);
  EXPECT_EQ(a->shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(a->n_elements(), 6u);
  float v[6];
  std::memcpy(v, a->bytes.data(), sizeof v);
  EXPECT_EQ(v[5], 6.0f);
  EXPECT_EQ(f->Find("b.weight")->dtype, SafetensorsDtype::kBF16);
  EXPECT_EQ(f->Find("c.ids")->dtype, SafetensorsDtype::kI64);
  EXPECT_EQ(f->Find("d.scalar")->n_elements(), 1u);
  EXPECT_EQ(f->Find("e.empty")->bytes.size(), 0u);
  EXPECT_EQ(f->Find("missing"), nullptr);
  EXPECT_EQ(f->metadata().at("format"), "pt");
}

TEST(SafetensorsFileTest, KeepsOtherValidDtypesAsOther) {
  const std::vector<StTensor> t = {{"u", "U8", {3}, {1, 2, 3}},
                                   {"f", "F64", {1}, RawBytes(std::vector<double>{1.0})}};
  auto f = SafetensorsFile::FromBytes(SafetensorsBytes(t), "x.safetensors");
  EXPECT_EQ(f->Find("u")->dtype, SafetensorsDtype::kOther);
  EXPECT_EQ(f->Find("f")->dtype_name, "F64");
}

TEST(SafetensorsFileTest, RejectsTruncatedFiles) {
  const auto good = SafetensorsBytes(TwoTensors());
  ExpectError({good.begin(), good.begin() + 5}, ErrorKind::kCorrupt, "too short");
  ExpectError({good.begin(), good.begin() + 20}, ErrorKind::kCorrupt, "truncated");
  ExpectError({good.begin(), good.end() - 3}, ErrorKind::kCorrupt, "truncated");
}

TEST(SafetensorsFileTest, RejectsBadHeaders) {
  const std::vector<StTensor> t = TwoTensors();
  ExpectError(SafetensorsBytes(t, "[1, 2]"), ErrorKind::kCorrupt, "does not start with '{'");
  ExpectError(SafetensorsBytes(t, "{\"a.weight\": {\"dtype\": "), ErrorKind::kCorrupt,
              "bad JSON header");
  std::vector<uint8_t> huge(16, 0);
  huge[3] = 0x10;  // header length 2^28 > 100,000,000
  ExpectError(huge, ErrorKind::kCorrupt, "above the limit");
  const std::string dup = R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},)"
                          R"( "a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})";
  ExpectError(SafetensorsBytes({{"a", "F32", {2}, FloatBytes({1, 2}, "F32")}}, dup),
              ErrorKind::kCorrupt, "names tensor 'a' twice");
}

TEST(SafetensorsFileTest, RejectsBadEntries) {
  const std::vector<StTensor> one = {{"a", "F32", {2}, FloatBytes({1, 2}, "F32")}};
  auto with = [&](const std::string& entry) {
    return SafetensorsBytes(one, "{\"a\": " + entry + "}");
  };
  ExpectError(with(R"({"dtype": "Q4", "shape": [2], "data_offsets": [0, 8]})"), ErrorKind::kCorrupt,
              "unknown dtype 'Q4'");
  ExpectError(with(R"({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]})"),
              ErrorKind::kCorrupt, "shape");
  ExpectError(with(R"({"dtype": "F32", "shape": [2], "data_offsets": [0]})"), ErrorKind::kCorrupt,
              "data_offsets");
  ExpectError(with(R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]})"),
              ErrorKind::kCorrupt, "needs 12");
  ExpectError(with(R"({"shape": [2], "data_offsets": [0, 8]})"), ErrorKind::kCorrupt,
              "dtype is missing");
}

TEST(SafetensorsFileTest, RejectsGapsOverlapsAndTrailingBytes) {
  const std::vector<StTensor> two = {{"a", "F32", {1}, FloatBytes({1}, "F32")},
                                     {"b", "F32", {1}, FloatBytes({2}, "F32")}};
  ExpectError(SafetensorsBytes(two, R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}})"),
              ErrorKind::kCorrupt, "overlapping");
  ExpectError(
      SafetensorsBytes(two, R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})"),
      ErrorKind::kCorrupt, "gap");
  ExpectError(
      SafetensorsBytes(two, R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})"),
      ErrorKind::kCorrupt, "unused bytes");
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::path(::testing::TempDir()) /
        ("st_ckpt_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  void WriteShards() {
    testing::WriteBytes(Path("model-00001-of-00002.safetensors"),
                        SafetensorsBytes({TwoTensors()[0]}));
    testing::WriteBytes(Path("model-00002-of-00002.safetensors"),
                        SafetensorsBytes({TwoTensors()[1]}));
  }
  void WriteIndex(const std::string& a_shard, const std::string& b_shard) {
    nlohmann::json index = {{"metadata", {{"total_size", 32}}},
                            {"weight_map", {{"a.weight", a_shard}, {"b.weight", b_shard}}}};
    testing::WriteText(Path("model.safetensors.index.json"), index.dump());
  }
  void ExpectOpenError(ErrorKind kind, const std::string& needle) {
    try {
      SafetensorsCheckpoint::Open(dir_.string());
      ADD_FAILURE() << "no error; expected '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  std::filesystem::path dir_;
};

TEST_F(CheckpointTest, OpensSingleFile) {
  testing::WriteBytes(Path("model.safetensors"), SafetensorsBytes(TwoTensors()));
  auto c = SafetensorsCheckpoint::Open(dir_.string());
  EXPECT_EQ(c->shard_count(), 1u);
  ASSERT_EQ(c->tensors().size(), 2u);
  EXPECT_EQ(c->tensors()[0]->name, "a.weight");
  EXPECT_NE(c->Find("b.weight"), nullptr);
}

TEST_F(CheckpointTest, OpensShardsThroughTheIndex) {
  WriteShards();
  WriteIndex("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors");
  auto c = SafetensorsCheckpoint::Open(dir_.string());
  EXPECT_EQ(c->shard_count(), 2u);
  EXPECT_EQ(c->Find("b.weight")->file, Path("model-00002-of-00002.safetensors"));
}

TEST_F(CheckpointTest, ReportsMissingAndWrongShards) {
  ExpectOpenError(ErrorKind::kNotFound, "no model.safetensors");
  WriteShards();
  WriteIndex("model-00001-of-00002.safetensors", "model-00003-of-00002.safetensors");
  ExpectOpenError(ErrorKind::kNotFound, "shard 'model-00003-of-00002.safetensors'");
  WriteIndex("model-00002-of-00002.safetensors", "model-00002-of-00002.safetensors");
  ExpectOpenError(ErrorKind::kCorrupt, "does not contain it");
  WriteIndex("../model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors");
  ExpectOpenError(ErrorKind::kCorrupt, "not a file inside");
  testing::WriteText(Path("model.safetensors.index.json"), "{\"weight_map\": 3}");
  ExpectOpenError(ErrorKind::kCorrupt, "weight_map");
}

TEST_F(CheckpointTest, RejectsATensorInTwoShards) {
  testing::WriteBytes(Path("s1.safetensors"), SafetensorsBytes(TwoTensors()));
  testing::WriteBytes(Path("s2.safetensors"), SafetensorsBytes({TwoTensors()[1]}));
  WriteIndex("s1.safetensors", "s2.safetensors");
  ExpectOpenError(ErrorKind::kCorrupt, "is in both");
}

TEST_F(CheckpointTest, ReportsATruncatedShard) {
  WriteShards();
  WriteIndex("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors");
  std::filesystem::resize_file(
      Path("model-00002-of-00002.safetensors"),
      std::filesystem::file_size(Path("model-00002-of-00002.safetensors")) - 2);
  ExpectOpenError(ErrorKind::kCorrupt, "truncated");
}

}  // namespace
}  // namespace tandem
