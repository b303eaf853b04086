#include "base/mapped_file.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/cpu_features.h"
#include "base/error.h"

namespace tandem {
namespace {

TEST(MappedFile, MapsWholeFile) {
  std::string path = testing::TempDir() + "mapped_file_test.bin";
  {
    std::ofstream out(path, std::ios::binary);
    out << "hello";
  }
  MappedFile file(path);
  ASSERT_EQ(file.size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.data()), 5), "hello");
  std::remove(path.c_str());
}

TEST(MappedFile, EmptyFileHasNoBytes) {
  std::string path = testing::TempDir() + "mapped_file_empty.bin";
  { std::ofstream out(path, std::ios::binary); }
  MappedFile file(path);
  EXPECT_EQ(file.size(), 0u);
  std::remove(path.c_str());
}

TEST(MappedFile, MissingFileNamesPath) {
  try {
    MappedFile file("/nonexistent/tandem.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/tandem.gguf"), std::string::npos);
  }
}

TEST(MappedFile, ReadAtCopiesTheRangeAndNamesTheOffsetWhenItCannot) {
  std::string path = testing::TempDir() + "mapped_file_read_at.bin";
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 3 * 4096; ++i) out.put(static_cast<char>(i * 7));
  }
  MappedFile file(path);
  char got[100];
  file.ReadAt(file.data() + 4090, sizeof got, got);
  EXPECT_EQ(std::memcmp(got, file.data() + 4090, sizeof got), 0);
  try {
    file.ReadAt(file.data() + file.size() - 10, 11, got);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);  // the file shrinks under the mapping
  try {
    file.ReadAt(file.data() + 2 * 4096, 16, got);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("offset 8192"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(CpuFeatures, TiersAreConsistent) {
  const CpuFeatures& f = HostCpuFeatures();
  if (f.HasAvx512Tier()) {
    EXPECT_TRUE(f.HasAvx2Tier());
  }
  EXPECT_FALSE(f.ToString().empty());
}

}  // namespace
}  // namespace tandem
