#include "encoders/gemma4a/random_mmproj.h"

#include <cmath>
#include <string>

#include "base/seeded_random.h"
#include "encoders/gemma4a/mmproj_layout.h"
#include "encoders/gemma4a/tensors.h"
#include "encoders/random_tensor.h"

namespace tandem {
namespace {

// Fills piece `index` of `spec`: n values, one fan-in's worth for the weights.
void FillPiece(const AudioTensorSpec& spec, uint64_t seed, uint64_t index, int64_t n, float* out) {
  using R = AudioTensorRole;
  RowRng rng(seed, index);
  if (spec.role == R::kClampBound) {
    out[0] = RandomClampBound(spec.name, rng);
    return;
  }
  float lo = -1, hi = 1;
  switch (spec.role) {
    case R::kSubsampleConv:
    case R::kInputProjection:
    case R::kMatrix:
    case R::kDepthwiseConv: {
      const float a = std::sqrt(3.0f / static_cast<float>(n));  // variance 1/fan_in
      lo = -a;
      hi = a;
      break;
    }
    case R::kSubsampleNorm:
    case R::kNorm:
      lo = 0.6f;
      hi = 1.4f;
      break;
    case R::kPerDimScale:
      lo = 0.5f;
      hi = 0.9f;
      break;
    case R::kOutputBias:
      lo = -0.5f;
      hi = 0.5f;
      break;
    case R::kClampBound:
      break;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = rng.Uniform(lo, hi);
}

// The name whose hash seeds `spec`: q, k and v draw one set of clamp bounds (the name of q's),
// as checkpoints hold them (the original model computes the three with one einsum, and the
// converter copies its bounds to each).
std::string SeedName(const AudioTensorSpec& spec) {
  std::string name = spec.name;
  if (spec.role != AudioTensorRole::kClampBound) return name;
  for (const char* kv : {".attn_k.", ".attn_v."}) {
    const size_t at = name.find(kv);
    if (at != std::string::npos) name.replace(at, 8, ".attn_q.");
  }
  return name;
}

}  // namespace

void AddRandomGemma4AudioTensors(const Gemma4AudioConfig& config,
                                 const RandomMmprojOptions& options, GgufWriter& w) {
  for (const AudioTensorSpec& spec : Gemma4AudioTensorList(config)) {
    const TensorType type = AudioMmprojTensorType(spec.role, spec.ne[0], options.weight_type);
    const uint64_t seed = SplitMix64(options.seed) ^ HashName(SeedName(spec));
    // A subsampling kernel is drawn one output channel (3·3·C_in values) at a time, the rest by
    // rows (a depthwise filter is a row of K).
    const int64_t piece = static_cast<int64_t>(spec.role == AudioTensorRole::kSubsampleConv
                                                   ? spec.ne[0] * spec.ne[1] * spec.ne[2]
                                                   : spec.ne[0]);
    AddRandomTensor(w, spec.name, type, spec.ne, piece,
                    [spec, seed](uint64_t index, int64_t n, float* out) {
                      FillPiece(spec, seed, index, n, out);
                    });
  }
}

void WriteRandomGemma4AudioMmproj(const Gemma4AudioConfig& config,
                                  const RandomMmprojOptions& options, const std::string& path) {
  WriteRandomMmproj(nullptr, &config, options, path);
}

}  // namespace tandem
