// The probes read every byte and do every multiply-add they count, on every path this machine
// has: each path's read sum equals plain C++'s on random words, the buffer of 1-bytes has a known
// checksum whatever the thread count, and the int8 probe's accumulators hold -15 per counted
// multiply-add.
#include "kernels/machine_limits.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "base/huge_page_allocator.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"

namespace tandem::kernels {
namespace {

using testing_kernels::IsaScope;

// The wrapping sum of `bytes` / 8 words, every byte 1.
unsigned long long OnesChecksum(size_t bytes) {
  return static_cast<unsigned long long>(bytes / 8) * 0x0101010101010101ull;
}

TEST(ReadSum, EveryPathSumsEveryWordOfRandomData) {
  std::mt19937_64 rng(7);
  for (size_t bytes : {size_t{256}, size_t{4096}, size_t{65536 + 768}}) {
    std::vector<uint64_t, HugePageAllocator<uint64_t>> words(bytes / 8);
    uint64_t want = 0;
    for (uint64_t& w : words) want += (w = rng());
    for (Isa isa : SupportedIsas()) {
      EXPECT_EQ(KernelsFor(isa).read_sum(words.data(), bytes), want)
          << IsaName(isa) << ", " << bytes << " bytes";
    }
  }
}

TEST(ReadBandwidth, ReadsEveryByteOnceWhateverTheThreadCountAndPath) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (const int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      const ReadBuffer buffer((size_t{5} << 20) + 12345);  // rounded down to 5 MiB
      EXPECT_EQ(buffer.bytes(), size_t{5} << 20);
      EXPECT_EQ(buffer.ReadAll(pool), OnesChecksum(buffer.bytes()))
          << IsaName(isa) << ", " << threads << " threads";
    }
  }
  EXPECT_EQ(ReadBuffer(100).bytes(), size_t{1} << 20);  // at least one chunk
}

TEST(ReadBandwidth, MeasuresAPositiveRate) {
  ThreadPool pool(2);
  const double rate = MeasureReadBandwidth(pool, size_t{8} << 20, 2);
  EXPECT_GT(rate, 0.0);
  EXPECT_TRUE(std::isfinite(rate));
}

TEST(Int8MultiplyAdds, EveryPathDoesTheMultiplyAddsItCounts) {
  for (Isa isa : SupportedIsas()) {
    const auto probe = KernelsFor(isa).int8_multiply_adds;
    int32_t sum = 0;
    const int64_t once = probe(1, &sum);
    EXPECT_GT(once, 0) << IsaName(isa);
    EXPECT_EQ(static_cast<uint32_t>(sum), static_cast<uint32_t>(-15 * once)) << IsaName(isa);
    // Enough rounds that the accumulators wrap: the count stays proportional, the sum modular.
    const int64_t rounds = 40'000'000 / once + 3;
    const int64_t many = probe(rounds, &sum);
    EXPECT_EQ(many, rounds * once) << IsaName(isa);
    EXPECT_EQ(static_cast<uint32_t>(sum), static_cast<uint32_t>(-15 * many)) << IsaName(isa);
  }
}

TEST(Int8Peak, MeasuresAPositiveRateOnEveryPath) {
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    ThreadPool pool(2);
    const double rate = MeasureInt8Peak(pool, 1000, 2);
    EXPECT_GT(rate, 0.0) << IsaName(isa);
    EXPECT_TRUE(std::isfinite(rate)) << IsaName(isa);
  }
}

}  // namespace
}  // namespace tandem::kernels
