#include "encoders/gemma4v/random_mmproj.h"

#include <cmath>

#include "base/seeded_random.h"
#include "encoders/gemma4v/mmproj_layout.h"
#include "encoders/random_tensor.h"

namespace tandem {
namespace {

// Fills draw `row` of `spec`: n values (a row of ne0 values; a whole p·p·3 kernel for the
// patch embedding, whose fan-in that is).
void FillRow(const VisionTensorSpec& spec, uint64_t seed, uint64_t row, int64_t n, float* out) {
  using R = VisionTensorRole;
  RowRng rng(seed, row);
  if (spec.role == R::kClampBound) {
    out[0] = RandomClampBound(spec.name, rng);
    return;
  }
  float lo = -1, hi = 1;
  switch (spec.role) {
    case R::kMatrix:
    case R::kPatchEmbedding: {
      const float a = std::sqrt(3.0f / static_cast<float>(n));  // variance 1/fan_in
      lo = -a;
      hi = a;
      break;
    }
    case R::kPositionTable:
      lo = -0.5f;
      hi = 0.5f;
      break;
    case R::kNorm:
    case R::kHeadNorm: {
      // q/k norm gains at RMS hd^(-1/4): unit-variance scores under attention scale 1.
      const float s = spec.role == R::kHeadNorm
                          ? std::pow(static_cast<float>(n), -0.25f) / 1.0263f  // RMS of U(.6, 1.4)
                          : 1.0f;
      lo = 0.6f * s;
      hi = 1.4f * s;
      break;
    }
    case R::kLayerScale:
      lo = 0.5f;
      hi = 1.0f;
      break;
    case R::kStdBias:
      break;
    case R::kStdScale:
      lo = 0.5f;
      hi = 1.5f;
      break;
    case R::kClampBound:
      break;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = rng.Uniform(lo, hi);
}

}  // namespace

void WriteRandomGemma4VisionMmproj(const Gemma4VisionConfig& config,
                                   const RandomMmprojOptions& options, const std::string& path) {
  WriteRandomMmproj(&config, nullptr, options, path);
}

void AddRandomGemma4VisionTensors(const Gemma4VisionConfig& config,
                                  const RandomMmprojOptions& options, GgufWriter& w) {
  for (const VisionTensorSpec& spec : Gemma4VisionTensorList(config)) {
    const TensorType type = MmprojTensorType(spec.role, spec.ne[0], options.weight_type);
    const uint64_t seed = SplitMix64(options.seed) ^ HashName(spec.name);
    // The patch kernel is drawn one output feature (p·p·3 values) at a time, the rest by rows.
    const int64_t piece = static_cast<int64_t>(spec.role == VisionTensorRole::kPatchEmbedding
                                                   ? spec.ne[0] * spec.ne[1] * spec.ne[2]
                                                   : spec.ne[0]);
    AddRandomTensor(w, spec.name, type, spec.ne, piece,
                    [spec, seed](uint64_t index, int64_t n, float* out) {
                      FillRow(spec, seed, index, n, out);
                    });
  }
}

}  // namespace tandem
