// Generation parameters shared by the speculative-decoding suites.
#pragma once

#include "engine/generator.h"

namespace tandem {

// Greedy decoding of n tokens with speculation `type` drafting up to `draft_max` tokens per
// round (adaptive or fixed).
inline GenerateParams Greedy(int n, SpecType type, int draft_max, bool adaptive) {
  GenerateParams p;
  p.n_predict = n;
  p.sampling.temperature = 0.0f;
  p.spec.type = type;
  p.spec.draft_max = draft_max;
  p.spec.adaptive = adaptive;
  return p;
}

}  // namespace tandem
