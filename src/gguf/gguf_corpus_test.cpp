// The fuzz seed corpus stays meaningful: every valid_* seed parses, every bad_* seed is rejected.
#include <gtest/gtest.h>

#include <filesystem>

#include "base/error.h"
#include "gguf/gguf_reader.h"

namespace tandem {
namespace {

TEST(GgufCorpus, SeedsParseOrFailAsNamed) {
  std::filesystem::path dir =
      std::filesystem::path(TANDEM_SOURCE_DIR) / "tests/fuzz/corpus/fuzz_gguf_reader";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int valid = 0, bad = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("valid_", 0) == 0) {
      auto f = GgufFile::Open(entry.path().string());
      EXPECT_GT(f->metadata().size(), 0u) << name;
      ++valid;
    } else if (name.rfind("bad_", 0) == 0) {
      EXPECT_THROW(GgufFile::Open(entry.path().string()), Error) << name;
      ++bad;
    }
  }
  EXPECT_GE(valid, 3);
  EXPECT_GE(bad, 3);
}

}  // namespace
}  // namespace tandem
