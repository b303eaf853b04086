// Deterministic pseudo-random values for generated fixtures (random-weight models): a stream per
// (seed, tensor name, row), so a value never depends on threads or on the order of generation.
#pragma once

#include <cstdint>
#include <string_view>

namespace tandem {

// SplitMix64's output function: a well-mixed 64-bit hash of x.
inline uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// FNV-1a of a name (a tensor's, to give it its own stream).
inline uint64_t HashName(std::string_view s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// Uniform floats in [lo, hi), one xorshift stream per (tensor seed, row).
class RowRng {
 public:
  RowRng(uint64_t tensor_seed, uint64_t row) : state_(SplitMix64(tensor_seed ^ SplitMix64(row))) {}
  float Uniform(float lo, float hi) {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    const float u = static_cast<float>(state_ >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
  }

 private:
  uint64_t state_;
};

}  // namespace tandem
