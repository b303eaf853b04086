// Seed resolution for Rng: llama.cpp's "random seed" value becomes a real random seed.
#include "sampling/rng.h"

#include <random>

#include "sampling/sampling_params.h"

namespace tandem {

uint32_t ResolveSeed(uint32_t seed) {
  if (seed != kRandomSeed) return seed;
  std::random_device device;
  uint32_t resolved = device();
  // Keep "random" out of the result so a resolved seed can be logged and replayed.
  while (resolved == kRandomSeed) resolved = device();
  return resolved;
}

}  // namespace tandem
