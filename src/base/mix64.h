// splitmix64's finaliser: spreads a 64-bit value over all 64 bits (hash keys, not randomness).
#pragma once

#include <cstdint>

namespace tandem {

inline uint64_t Mix64(uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace tandem
