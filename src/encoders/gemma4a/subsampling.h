// The conformer's input stage: two 3×3 stride-2 convolutions over (time, frequency), each followed
// by a LayerNorm over channels and ReLU, then each remaining time step flattened (frequency, then
// channel fastest) and projected to the tower's width (docs/audio.md § The forward pass, step 1).
// Each output row depends only on the input, never on the thread count: every value is one row
// of kernels::MatMul or kernels::MatMulPanels (once the weights hold panels) or a fixed-order
// per-row loop.
#pragma once

#include "base/huge_page_allocator.h"
#include "encoders/gemma4a/config.h"
#include "encoders/gemma4a/weights.h"

namespace tandem {

class ThreadPool;

// Length after one stride-2 convolution with padding 1 and kernel 3: ceil(n / 2).
constexpr int SubsampledLength(int n) {
  return (n + 1) / 2;
}

// mel: [n_frames][config.n_mel] log-mel features, n_frames >= 1. Returns
// [SubsampledLength(SubsampledLength(n_frames))][config.n_embd]. Throws Error(kInvalidArgument)
// for n_frames < 1.
ActivationBuffer Gemma4AudioSubsample(const Gemma4AudioConfig& config,
                                      const Gemma4AudioWeights& weights, const float* mel,
                                      int n_frames, ThreadPool& pool);

}  // namespace tandem
