#include "base/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdio>
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

TEST(CpuFeatures, TiersAreConsistent) {
  const CpuFeatures& f = HostCpuFeatures();
  if (f.HasAvx512Tier()) {
    EXPECT_TRUE(f.HasAvx2Tier());
  }
  EXPECT_FALSE(f.ToString().empty());
}

}  // namespace
}  // namespace tandem
