// Writes random-weight Gemma 4 GGUFs, deterministic from a seed, in any weight type the writer
// supports: fixtures for tests and benchmarks, at tiny or real shapes (`tandem mkmodel`).
#pragma once

#include <cstdint>
#include <string>

#include "model/gemma4/config.h"
#include "model/gemma4/presets.h"
#include "tensor/type_traits.h"

namespace tandem {

struct RandomModelOptions {
  uint64_t seed = 1234;
  TensorType weight_type = TensorType::kF32;  // matrices and embeddings; norms/scales stay F32
  std::string name = "tandem random gemma4";
  // Acceptance knob for speculative benchmarks at full size (< 0: off). The target's post-branch
  // norms (post-attention, post-FFN, PLE post-norm) are scaled by epsilon so each layer barely
  // changes the residual and the model echoes its input token; the assistant becomes a "repeat
  // the input token" drafter (its pre-projection reads only the embedding half, its tied head is
  // the target's embedding). epsilon 0 gives ~100% acceptance; acceptance falls as it grows.
  float echo_epsilon = -1.0f;
  // Token pairs for draft-tree benchmarks (< 0: off): the token embedding's odd row 2k + 1 is its
  // even row 2k plus this times a random row, in the target and the assistant alike. With the
  // echo knob at a small enough epsilon, the target's next token is mostly one of its input's
  // pair, which one decided by what the layers add, and the assistant's top two are that pair:
  // an assistant right part of the time whose runner-up is often right when it is not. In a
  // quantized file the rounding, not the spread alone, sets how far apart a pair's rows lie.
  float echo_pair_spread = -1.0f;
};

// Weights: matrices uniform with variance 1/fan_in, embeddings variance 1/row length (so the
// sqrt(D)-scaled embedding has unit variance), norms uniform in [0.6, 1.4], layer output scales in
// [0.5, 1.0]. Each tensor's values depend only on (seed, tensor name). A synthetic gemma4
// tokenizer (special tokens incl. the chat markers, byte fallback, printable characters, a few
// merges, filler tokens) makes the file a complete model. Tensors are generated while writing,
// so memory stays bounded for the real shapes. Throws Error on an unsupported weight type or I/O.
void WriteRandomGemma4(const Gemma4Config& config, const RandomModelOptions& options,
                       const std::string& path);

// A random MTP assistant (arch gemma4-assistant) for the target of `preset`, with the same
// synthetic vocabulary, and the centroid head when preset.n_centroids > 0.
void WriteRandomGemma4Assistant(const AssistantPreset& preset, const RandomModelOptions& options,
                                const std::string& path);

}  // namespace tandem
