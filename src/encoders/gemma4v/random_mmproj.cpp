#include "encoders/gemma4v/random_mmproj.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/seeded_random.h"
#include "base/thread_pool.h"
#include "encoders/gemma4v/mmproj_layout.h"
#include "gguf/gguf_writer.h"
#include "tensor/quantize.h"

namespace tandem {
namespace {

// Fills draw `row` of `spec`: n values (a row of ne0 values; a whole p·p·3 kernel for the
// patch embedding, whose fan-in that is).
void FillRow(const VisionTensorSpec& spec, uint64_t seed, uint64_t row, int64_t n, float* out) {
  using R = VisionTensorRole;
  RowRng rng(seed, row);
  if (spec.role == R::kClampBound) {
    // Minimums negative, maximums positive, magnitudes in [1, 3].
    const bool is_min = spec.name.find("_min") != std::string::npos;
    const float m = rng.Uniform(1.0f, 3.0f);
    out[0] = is_min ? -m : m;
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
  const TensorType wtype = options.weight_type;
  if (wtype != TensorType::kF32 && !CanQuantize(wtype)) {
    Fail(ErrorKind::kUnsupported,
         "mkmodel: cannot write mmproj weights of type " + std::string(TensorTypeName(wtype)));
  }
  config.Validate("mmproj writer");
  GgufWriter w;
  WriteGemma4VisionMmprojKeys(config, wtype, options.name, w);

  for (const VisionTensorSpec& spec : Gemma4VisionTensorList(config)) {
    const TensorType type = MmprojTensorType(spec.role, spec.ne[0], wtype);
    const uint64_t seed = SplitMix64(options.seed) ^ HashName(spec.name);
    w.AddTensor(spec.name, type, spec.ne, [spec, seed, type](const GgufByteSink& sink) {
      const int64_t n = static_cast<int64_t>(spec.ne[0]);
      uint64_t rows = 1;
      for (size_t i = 1; i < spec.ne.size(); ++i) rows *= spec.ne[i];
      // The patch kernel is drawn one output feature (p·p·3 values) at a time.
      const int64_t draw = spec.role == VisionTensorRole::kPatchEmbedding
                               ? static_cast<int64_t>(spec.ne[0] * spec.ne[1] * spec.ne[2])
                               : n;
      const uint64_t draws = rows * n / draw;
      const size_t draw_bytes = RowBytes(GetTensorTypeTraits(type), draw);
      const uint64_t chunk = std::max<uint64_t>(1, (8u << 20) / (draw * sizeof(float)));
      std::vector<uint8_t> out;
      for (uint64_t r0 = 0; r0 < draws; r0 += chunk) {
        const uint64_t nr = std::min(chunk, draws - r0);
        out.resize(nr * draw_bytes);
        GlobalThreadPool().ParallelForRange(nr, [&](size_t b, size_t e, int) {
          std::vector<float> values(draw);
          for (size_t r = b; r < e; ++r) {
            FillRow(spec, seed, r0 + r, draw, values.data());
            if (type == TensorType::kF32) {
              std::memcpy(out.data() + r * draw_bytes, values.data(), draw_bytes);
            } else {
              QuantizeRow(type, values.data(), out.data() + r * draw_bytes, draw);
            }
          }
        });
        sink(out);
      }
    });
  }
  w.Write(path);
}

}  // namespace tandem
