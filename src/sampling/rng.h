// Per-request counter-based random numbers: a draw is a pure function of (seed, stream, index).
//
// Definition (fixed; results are identical on every machine and run):
//   Mix64(z)  = SplitMix64's finaliser: z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
//               z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31   (all mod 2^64)
//   key       = Mix64(Mix64(seed) ^ stream)
//   bits(i)   = Mix64(key + (i + 1) * 0x9E3779B97F4A7C15)                (draw index i = 0, 1, ...)
//   uniform(i)= (bits(i) >> 11) * 2^-53                                  in [0, 1), 53 bits
// i.e. SplitMix64 started at `key`, so any draw can also be computed directly from its index.
// No std:: distributions are involved (their output is implementation-defined).
#pragma once

#include <cstdint>

namespace tandem {

// Replaces kRandomSeed (0xFFFFFFFF, llama.cpp's "random") with a seed from std::random_device;
// any other seed is returned unchanged.
uint64_t ResolveSeed(uint64_t seed);

class Rng {
 public:
  // `stream` separates independent sequences under one seed (e.g. 0 = the target's draws,
  // 1 = the drafter's), so one consumer's draw count never shifts the other's.
  explicit Rng(uint64_t seed, uint64_t stream = 0) : key_(Mix64(Mix64(seed) ^ stream)) {}

  // The next 64 random bits; advances the draw index by one.
  uint64_t NextBits() { return BitsAt(index_++); }
  // The next uniform in [0, 1) with 53 random bits; advances the draw index by one.
  double Uniform() { return UniformAt(index_++); }

  // Draw `index` without touching the position (bits / uniform as defined above).
  uint64_t BitsAt(uint64_t index) const { return Mix64(key_ + (index + 1) * kGamma); }
  double UniformAt(uint64_t index) const {
    return static_cast<double>(BitsAt(index) >> 11) * 0x1.0p-53;
  }

  // How many draws were taken; set it to replay or skip draws.
  uint64_t draw_index() const { return index_; }
  void set_draw_index(uint64_t index) { index_ = index; }

  static constexpr uint64_t Mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

 private:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;  // 2^64 / golden ratio, odd
  uint64_t key_;
  uint64_t index_ = 0;
};

}  // namespace tandem
