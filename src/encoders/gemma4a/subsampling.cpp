#include "encoders/gemma4a/subsampling.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "base/huge_page_allocator.h"
#include "base/thread_pool.h"
#include "encoders/clipped_linear.h"
#include "kernels/matmul.h"
#include "kernels/matmul_panels.h"

namespace tandem {
namespace {

// Output time step t's F_out patches of a stride-2 3×3 convolution over x [T][F][cin], each in the
// kernel's (channel, time, frequency) order, zeros outside the input, into p.
void GatherStep(const float* x, int T, int F, int cin, int t, int F_out, float* p) {
  for (int f = 0; f < F_out; ++f, p += cin * 9) {
    for (int c = 0; c < cin; ++c) {
      for (int kt = 0; kt < 3; ++kt) {
        for (int kf = 0; kf < 3; ++kf) {
          const int ti = 2 * t - 1 + kt, fi = 2 * f - 1 + kf;
          const bool inside = ti >= 0 && ti < T && fi >= 0 && fi < F;
          p[(c * 3 + kt) * 3 + kf] =
              inside ? x[(static_cast<size_t>(ti) * F + fi) * cin + c] : 0.0f;
        }
      }
    }
  }
}

// One stride-2 convolution stage: x [T][F][cin] -> y [T'][F'][cout], each output row (t', f')
// normalised over its channels (mean removed, gain when present), then ReLU.
void ConvStage(const float* x, int T, int F, int cin, const std::vector<float>& kernel,
               const kernels::PanelMatrix& panels, const std::vector<float>& gain, int cout,
               ThreadPool& pool, ActivationBuffer& y, int& T_out, int& F_out) {
  T_out = SubsampledLength(T);
  F_out = SubsampledLength(F);
  const int patch = cin * 9;
  const kernels::WeightMatrix w =
      kernels::DenseWeightMatrix(TensorType::kF32, kernel.data(), cout, patch);
  y.assign(static_cast<size_t>(T_out) * F_out * cout, 0.0f);
  // Output time steps in groups of about kGroupValues gathered values: each step's F' patches,
  // in the kernel's (channel, time, frequency) order with zeros outside the input, one product
  // per group (a row's result does not depend on the group: the rows of kernels::MatMul, or of
  // MatMulPanels once the weights hold panels, are independent).
  constexpr size_t kGroupValues = size_t{1} << 20;
  const int group = std::max(1, static_cast<int>(kGroupValues / (size_t(F_out) * patch)));
  ActivationBuffer patches(static_cast<size_t>(std::min(group, T_out)) * F_out * patch);
  for (int t0 = 0; t0 < T_out; t0 += group) {
    const int t1 = std::min(T_out, t0 + group);
    pool.ParallelForRange(static_cast<size_t>(t1 - t0), [&](size_t begin, size_t end, int) {
      for (size_t i = begin; i < end; ++i) {
        const int t = t0 + static_cast<int>(i);
        GatherStep(x, T, F, cin, t, F_out, patches.data() + i * F_out * patch);
      }
    });
    float* out = y.data() + static_cast<size_t>(t0) * F_out * cout;
    const int64_t rows = static_cast<int64_t>(t1 - t0) * F_out;
    if (panels.empty()) {
      kernels::MatMul(w, patches.data(), rows, out, pool);
    } else {
      kernels::MatMulPanels(panels, patches.data(), rows, out, pool);
    }
    pool.ParallelForRange(static_cast<size_t>(rows), [&](size_t begin, size_t end, int) {
      for (size_t r = begin; r < end; ++r) {
        float* row = out + r * cout;
        float mean = 0.0f;
        for (int c = 0; c < cout; ++c) mean += row[c];
        mean /= static_cast<float>(cout);
        float var = 0.0f;
        for (int c = 0; c < cout; ++c) var += (row[c] - mean) * (row[c] - mean);
        var /= static_cast<float>(cout);
        const float inv = 1.0f / std::sqrt(var + Gemma4AudioConfig::kNormEps);
        for (int c = 0; c < cout; ++c) {
          float v = (row[c] - mean) * inv;
          if (!gain.empty()) v *= gain[c];
          row[c] = v > 0.0f ? v : 0.0f;
        }
      }
    });
  }
}

}  // namespace

ActivationBuffer Gemma4AudioSubsample(const Gemma4AudioConfig& c, const Gemma4AudioWeights& w,
                                      const float* mel, int n_frames, ThreadPool& pool) {
  if (n_frames < 1) {
    Fail(ErrorKind::kInvalidArgument,
         "gemma4a: " + std::to_string(n_frames) + " mel frames, expected at least 1");
  }
  ActivationBuffer h1, h2;
  int T1, F1, T2, F2;
  ConvStage(mel, n_frames, c.n_mel, 1, w.conv0, w.conv0_panels, w.conv0_norm, c.sub_channels0, pool,
            h1, T1, F1);
  ConvStage(h1.data(), T1, F1, c.sub_channels0, w.conv1, w.conv1_panels, w.conv1_norm,
            c.sub_channels1, pool, h2, T2, F2);
  // h2 is [T2][F2·C1] with channels fastest: the flattened frames the projection reads.
  ActivationBuffer out(static_cast<size_t>(T2) * c.n_embd);
  std::vector<float> unused;  // the projection has no bounds: no clamped copy
  ClippedMatMul(w.input_projection, h2.data(), T2, out.data(), unused, pool);
  return out;
}

}  // namespace tandem
