// The bandwidth probe reads every byte of its buffer: the checksum of a buffer of 1-bytes is
// known, with one thread or several, and a measurement is a positive, finite rate.
#include "base/read_bandwidth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace tandem {
namespace {

// The wrapping sum of `bytes` / 8 words, every byte 1.
unsigned long long OnesChecksum(size_t bytes) {
  return static_cast<unsigned long long>(bytes / 8) * 0x0101010101010101ull;
}

TEST(ReadBandwidth, ReadsEveryByteOnceWhateverTheThreadCount) {
  for (const int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    const ReadBuffer buffer((size_t{5} << 20) + 12345);  // rounded down to 5 MiB
    EXPECT_EQ(buffer.bytes(), size_t{5} << 20);
    EXPECT_EQ(buffer.ReadAll(pool), OnesChecksum(buffer.bytes())) << threads << " threads";
  }
  ThreadPool pool(1);
  EXPECT_EQ(ReadBuffer(100).bytes(), size_t{1} << 20);  // at least one chunk
}

TEST(ReadBandwidth, MeasuresAPositiveRate) {
  ThreadPool pool(2);
  const double rate = MeasureReadBandwidth(pool, size_t{8} << 20, 2);
  EXPECT_GT(rate, 0.0);
  EXPECT_TRUE(std::isfinite(rate));
}

}  // namespace
}  // namespace tandem
