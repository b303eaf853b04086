// Tests for Rng: the documented (seed, stream, index) -> bits mapping, replay and uniformity.
#include "sampling/rng.h"

#include <gtest/gtest.h>

#include <vector>

#include "sampling/sampling_params.h"

namespace tandem {
namespace {

TEST(RngTest, SeedZeroStreamZeroIsSplitMix64FromStateZero) {
  // key = Mix64(Mix64(0) ^ 0) = 0, so the draws are SplitMix64's published sequence for seed 0.
  Rng rng(0);
  EXPECT_EQ(rng.NextBits(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.NextBits(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.NextBits(), 0x06C45D188009454Full);
  EXPECT_EQ(rng.draw_index(), 3u);
}

TEST(RngTest, UniformIsTopFiftyThreeBits) {
  Rng rng(1234, 7);
  for (uint64_t i = 0; i < 100; ++i) {
    const uint64_t bits = rng.BitsAt(i);
    const double u = rng.Uniform();
    EXPECT_EQ(u, static_cast<double>(bits >> 11) / 9007199254740992.0);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(RngTest, SameSeedSameSequenceAndRandomAccessMatches) {
  Rng a(42), b(42);
  std::vector<double> first;
  for (int i = 0; i < 1000; ++i) first.push_back(a.Uniform());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(b.Uniform(), first[i]);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(a.UniformAt(i), first[i]);
  // Rewinding replays.
  a.set_draw_index(500);
  EXPECT_EQ(a.Uniform(), first[500]);
}

TEST(RngTest, SeedsAndStreamsGiveDifferentSequences) {
  EXPECT_NE(Rng(42).BitsAt(0), Rng(43).BitsAt(0));
  EXPECT_NE(Rng(42, 0).BitsAt(0), Rng(42, 1).BitsAt(0));
  // A stream is not a shifted copy of another stream.
  const Rng s0(42, 0), s1(42, 1);
  for (uint64_t shift = 0; shift < 64; ++shift) EXPECT_NE(s0.BitsAt(shift), s1.BitsAt(0));
}

TEST(RngTest, UniformsAreEvenlySpread) {
  // 16 equal bins over 160000 draws: chi-square with 15 degrees of freedom must stay below
  // 63.0 (P = 1e-7); a generator that, say, reused only 32 bits would still pass, but a broken
  // conversion (e.g. u in [0, 0.5)) fails by thousands.
  Rng rng(2024);
  std::vector<int> bins(16, 0);
  const int n = 160000;
  for (int i = 0; i < n; ++i) ++bins[static_cast<int>(rng.Uniform() * 16)];
  double chi = 0.0;
  for (int count : bins) chi += (count - n / 16.0) * (count - n / 16.0) / (n / 16.0);
  EXPECT_LT(chi, 63.0);
}

TEST(RngTest, ResolveSeedKeepsExplicitSeeds) {
  EXPECT_EQ(ResolveSeed(0), 0u);
  EXPECT_EQ(ResolveSeed(12345), 12345u);
  EXPECT_NE(ResolveSeed(kRandomSeed), kRandomSeed);
}

}  // namespace
}  // namespace tandem
