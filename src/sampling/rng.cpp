// Seed resolution for Rng: llama.cpp's "random seed" value becomes a real random seed.
#include "sampling/rng.h"

#include <random>

#include "sampling/sampling_params.h"

namespace tandem {

uint64_t ResolveSeed(uint64_t seed) {
  if (seed != kRandomSeed) return seed;
  std::random_device device;
  uint64_t resolved = kRandomSeed;
  // Keep "random" out of the result so a resolved seed can be logged and replayed.
  while (resolved == kRandomSeed) resolved = (uint64_t{device()} << 32) | device();
  return resolved;
}

}  // namespace tandem
