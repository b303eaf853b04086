// Embedding lookup: every readable type gives its dequantized row, scaled; bad ids and tables
// are rejected; batches and threads do not change rows.
#include "kernels/embedding.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "kernels/kernel_test_util.h"
#include "tensor/dequantize.h"
#include "tensor/float16.h"
#include "tensor/quantize.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;

// A table of n_rows x n_cols of `type`: quantized from random values where tandem can
// quantize the type, random bytes otherwise (the lookup must still return the decoded row).
std::vector<uint8_t> MakeTable(TensorType type, int64_t n_rows, int64_t n_cols, uint32_t seed) {
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(type), n_cols);
  std::vector<uint8_t> table(row_bytes * n_rows);
  std::mt19937 rng(seed);
  if (CanQuantize(type)) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> row(n_cols);
    for (int64_t r = 0; r < n_rows; ++r) {
      for (auto& x : row) x = dist(rng);
      QuantizeRow(type, row.data(), table.data() + r * row_bytes, n_cols);
    }
  } else {
    for (auto& b : table) b = static_cast<uint8_t>(rng());
  }
  return table;
}

TEST(EmbeddingTest, EveryReadableTypeGivesItsDequantizedRow) {
  int tested = 0;
  for (uint32_t id = 0; id < kTensorTypeIdLimit; ++id) {
    const auto traits = FindTensorTypeTraits(id);
    if (!traits || !traits->dequantizable) continue;
    ++tested;
    const int64_t n_rows = 5, n_cols = 2 * traits->block_size * (traits->block_size == 1 ? 48 : 1);
    const std::vector<uint8_t> data = MakeTable(traits->type, n_rows, n_cols, id);
    const EmbeddingTable table{traits->type, data.data(), n_rows, n_cols};
    const size_t row_bytes = RowBytes(*traits, n_cols);
    for (int64_t r = 0; r < n_rows; ++r) {
      std::vector<float> want(n_cols), got(n_cols), scaled(n_cols);
      DequantizeRow(traits->type, data.data() + r * row_bytes, want.data(), n_cols);
      EmbedRow(table, r, 1.0f, got.data());
      EXPECT_TRUE(BitwiseEqual(got, want)) << traits->name << " row " << r;
      EmbedRow(table, r, 2.5f, scaled.data());
      for (auto& x : want) x *= 2.5f;
      EXPECT_TRUE(BitwiseEqual(scaled, want)) << traits->name << " row " << r << " scaled";
    }
  }
  EXPECT_GE(tested, 16);  // f32, f16, bf16, legacy quants, K-quants, iq4, mxfp4
}

// Whether this process maps the page holding `p` (/proc/self/pagemap bit 63), or -1 when the
// kernel does not say.
int PageMapped(const void* p) {
  const int fd = ::open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return -1;
  uint64_t entry = 0;
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / 4096 * 8);
  const bool ok = ::pread(fd, &entry, sizeof entry, at) == sizeof entry;
  ::close(fd);
  return ok ? static_cast<int>(entry >> 63) : -1;
}

TEST(EmbeddingTest, RowsReadFromTheFileAreTheSameAndStayOutOfTheResidentSet) {
  if (::sysconf(_SC_PAGESIZE) != 4096) GTEST_SKIP() << "the pagemap probe assumes 4 KiB pages";
  const TensorType type = TensorType::kQ6_K;
  const int64_t n_cols = 8960, n_rows = 64;  // E2B's per-layer row: 7350 bytes
  const std::vector<uint8_t> data = MakeTable(type, n_rows, n_cols, 7);
  const std::string path = testing::TempDir() + "embedding_table.bin";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data.data()),
              static_cast<std::streamsize>(data.size()));
  }
  MappedFile file(path);
  const EmbeddingTable in_memory{type, data.data(), n_rows, n_cols};
  const EmbeddingTable mapped{type, file.data(), n_rows, n_cols};
  const EmbeddingTable read{type, file.data(), n_rows, n_cols, &file};
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(type), n_cols);
  const int32_t ids[] = {40, 3, 40, 17};
  std::vector<float> want(4 * n_cols), got(4 * n_cols);
  EmbedRows(in_memory, ids, 4, 0.5f, want.data(), n_cols, nullptr);
  ThreadPool pool(2);
  EmbedRows(read, ids, 4, 0.5f, got.data(), n_cols, &pool);
  EXPECT_TRUE(BitwiseEqual(got, want));
  const uint8_t* row40 = file.data() + 40 * row_bytes;
  if (PageMapped(row40) < 0) GTEST_SKIP() << "no /proc/self/pagemap";
  EXPECT_EQ(PageMapped(row40), 0) << "reading the row with pread mapped its page";
  EmbedRow(mapped, 40, 1.0f, got.data());  // the control: a read through the mapping maps it
  EXPECT_EQ(PageMapped(row40), 1);
  std::remove(path.c_str());
}

TEST(EmbeddingTest, KnownValues) {
  // f32: the stored floats themselves.
  std::vector<float> f32(3 * 4);
  for (size_t i = 0; i < f32.size(); ++i) f32[i] = 0.25f * static_cast<float>(i) - 1.0f;
  std::vector<float> out(4);
  EmbedRow({TensorType::kF32, f32.data(), 3, 4}, 2, 1.0f, out.data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i], f32[8 + i]);
  // f16: exact binary16 values.
  const uint16_t f16[4] = {Fp32ToFp16(1.5f), Fp32ToFp16(-2.0f), Fp32ToFp16(0.0f),
                           Fp32ToFp16(65504.0f)};
  EmbedRow({TensorType::kF16, f16, 1, 4}, 0, 1.0f, out.data());
  EXPECT_EQ(out[0], 1.5f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[3], 65504.0f);
  // q8_0: two rows of one block, row 1 has d = 0.5 and q_i = i - 16.
  BlockQ8_0 blocks[2] = {};
  blocks[1].d = Fp32ToFp16(0.5f);
  for (int i = 0; i < 32; ++i) blocks[1].qs[i] = static_cast<int8_t>(i - 16);
  std::vector<float> q8(32);
  EmbedRow({TensorType::kQ8_0, blocks, 2, 32}, 1, 2.0f, q8.data());
  for (int i = 0; i < 32; ++i) EXPECT_EQ(q8[i], static_cast<float>(i - 16)) << i;
}

template <typename F>
void ExpectError(F fn, ErrorKind kind, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(EmbeddingTest, RejectsBadIdsAndTables) {
  std::vector<float> f32(4 * 8, 1.0f);
  const EmbeddingTable table{TensorType::kF32, f32.data(), 4, 8};
  std::vector<float> out(3 * 8, NAN);
  ExpectError([&] { EmbedRow(table, 4, 1.0f, out.data()); }, ErrorKind::kInvalidArgument,
              "token id 4");
  ExpectError([&] { EmbedRow(table, -1, 1.0f, out.data()); }, ErrorKind::kInvalidArgument,
              "token id -1");
  const int32_t ids[3] = {0, 1, 9};
  ExpectError([&] { EmbedRows(table, ids, 3, 1.0f, out.data(), 8); }, ErrorKind::kInvalidArgument,
              "token id 9");
  for (float x : out) EXPECT_TRUE(std::isnan(x));  // nothing written before the check
  ExpectError([&] { EmbedRows(table, ids, 2, 1.0f, out.data(), 4); }, ErrorKind::kInvalidArgument,
              "out_stride");
  ExpectError(
      [&] {
        EmbedRow({TensorType::kQ8_K, f32.data(), 1, 256}, 0, 1.0f, out.data());
      },
      ErrorKind::kUnsupported, "q8_K");
  ExpectError(
      [&] {
        EmbedRow({TensorType::kQ8_0, f32.data(), 1, 33}, 0, 1.0f, out.data());
      },
      ErrorKind::kInvalidArgument, "33");
  ExpectError(
      [&] {
        EmbedRow({TensorType::kF32, nullptr, 4, 8}, 0, 1.0f, out.data());
      },
      ErrorKind::kInvalidArgument, "no data");
}

TEST(EmbeddingTest, RowsIndependentOfBatchAndThreads) {
  const int64_t n_rows = 50, n_cols = 256;
  const std::vector<uint8_t> data = MakeTable(TensorType::kQ4_K, n_rows, n_cols, 77);
  const EmbeddingTable table{TensorType::kQ4_K, data.data(), n_rows, n_cols};
  const std::vector<int32_t> ids = {3, 49, 0, 3, 17, 22, 8, 8, 31, 1, 40};
  const size_t stride = n_cols + 3;
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    std::vector<float> out(ids.size() * stride, 0.0f);
    EmbedRows(table, ids.data(), static_cast<int64_t>(ids.size()), 16.0f, out.data(), stride,
              &pool);
    for (size_t i = 0; i < ids.size(); ++i) {
      std::vector<float> want(n_cols);
      EmbedRow(table, ids[i], 16.0f, want.data());
      const std::vector<float> got(out.begin() + i * stride, out.begin() + i * stride + n_cols);
      EXPECT_TRUE(BitwiseEqual(got, want)) << "threads " << threads << " row " << i;
    }
  }
}

}  // namespace
}  // namespace tandem::kernels
