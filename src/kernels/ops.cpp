// Dispatch of the row ops to the active ISA's kernels (isa.h), the exact elementwise ops and RoPE.
#include "kernels/ops.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"

namespace tandem::kernels {

void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y) {
  ActiveKernels().rms_norm(x, weight, eps, n, y);
}

void RmsNormRows(const float* x, size_t x_stride, const float* weight, float eps, int64_t n,
                 int64_t n_rows, float* y, size_t y_stride, ThreadPool* pool) {
  auto rows = [&](size_t begin, size_t end, int /*thread*/) {
    for (size_t r = begin; r < end; ++r)
      RmsNorm(x + r * x_stride, weight, eps, n, y + r * y_stride);
  };
  // A few rows (per-head norms of one token) are cheaper than waking the pool.
  if (pool == nullptr || n_rows * n < 32768) {
    rows(0, static_cast<size_t>(n_rows), 0);
  } else {
    pool->ParallelForRange(static_cast<size_t>(n_rows), rows);
  }
}

void Gelu(const float* x, int64_t n, float* y) {
  ActiveKernels().gelu(x, n, y);
}

void GeGlu(const float* gate, const float* up, int64_t n, float* y) {
  ActiveKernels().geglu(gate, up, n, y);
}

namespace {

// Runs fn(begin, len) over [0, n) in chunks spread over the pool, from two chunks' worth: a
// smaller row is done before the pool wakes. (An elementwise op's result is the same wherever
// it is computed.) A verification's GeGLU is large enough that doing it on the calling thread
// alone left the workers idle.
template <class Fn>
void ElementwiseOverPool(int64_t n, ThreadPool& pool, Fn fn) {
  constexpr int64_t kChunk = 8192;
  if (n < 2 * kChunk || pool.size() == 1) return fn(0, n);
  pool.ParallelFor(static_cast<size_t>((n + kChunk - 1) / kChunk), [&](size_t c) {
    const int64_t begin = static_cast<int64_t>(c) * kChunk;
    fn(begin, std::min(kChunk, n - begin));
  });
}

}  // namespace

void GeGlu(const float* gate, const float* up, int64_t n, float* y, ThreadPool& pool) {
  ElementwiseOverPool(n, pool, [&](int64_t begin, int64_t len) {
    GeGlu(gate + begin, up + begin, len, y + begin);
  });
}

void Silu(const float* x, int64_t n, float* y) {
  ActiveKernels().silu(x, n, y);
}

void SigmoidGlu(const float* value, const float* gate, int64_t n, float* y) {
  ActiveKernels().sigmoid_glu(value, gate, n, y);
}

void GeGluQuick(const float* gate, const float* up, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = gate[i];
    y[i] = x / (1.0f + std::exp(-1.702f * x)) * up[i];
  }
}

void GeGluQuick(const float* gate, const float* up, int64_t n, float* y, ThreadPool& pool) {
  ElementwiseOverPool(n, pool, [&](int64_t begin, int64_t len) {
    GeGluQuick(gate + begin, up + begin, len, y + begin);
  });
}

void Softcap(const float* x, float cap, int64_t n, float* y) {
  ActiveKernels().softcap(x, cap, n, y);
}

void Softcap(const float* x, float cap, int64_t n, float* y, ThreadPool& pool) {
  ElementwiseOverPool(n, pool,
                      [&](int64_t begin, int64_t len) { Softcap(x + begin, cap, len, y + begin); });
}

void Softmax(const float* x, int64_t n, float* y) {
  ActiveKernels().softmax(x, n, y);
}

void ToHalf(const float* x, int64_t n, uint16_t* y) {
  ActiveKernels().to_half(x, n, y);
}

void Add(const float* a, const float* b, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void Scale(const float* x, float s, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s;
}

// ---- RoPE ----

namespace {

constexpr float kUnrotatedFactor = 1e30f;

void CheckRopeShape(int head_dim, int n_rot, float theta) {
  if (head_dim <= 0 || n_rot <= 0 || n_rot > head_dim || n_rot % 2 != 0) {
    Fail(ErrorKind::kInvalidArgument,
         "RoPE: need 0 < n_rot <= head_dim and n_rot even, got n_rot " + std::to_string(n_rot) +
             ", head_dim " + std::to_string(head_dim));
  }
  if (!(theta > 0.0f) || !std::isfinite(theta)) {
    Fail(ErrorKind::kInvalidArgument,
         "RoPE: theta must be finite and > 0, got " + std::to_string(theta));
  }
}

}  // namespace

Rope Rope::Neox(int head_dim, int n_rot, float theta, std::span<const float> freq_factors) {
  CheckRopeShape(head_dim, n_rot, theta);
  const int half = n_rot / 2;
  if (!freq_factors.empty() && freq_factors.size() != static_cast<size_t>(half)) {
    Fail(ErrorKind::kInvalidArgument, "RoPE: rope_freqs has " +
                                          std::to_string(freq_factors.size()) +
                                          " factors, expected n_rot/2 = " + std::to_string(half));
  }
  std::vector<float> inv_freq(half);
  for (int i = 0; i < half; ++i) {
    const double base = std::pow(static_cast<double>(theta), -2.0 * i / n_rot);
    double factor = 1.0;
    if (!freq_factors.empty()) {
      factor = freq_factors[i];
      if (!(factor > 0.0) || std::isnan(factor)) {
        Fail(ErrorKind::kInvalidArgument, "RoPE: rope_freqs[" + std::to_string(i) +
                                              "] = " + std::to_string(factor) + " is not > 0");
      }
    }
    inv_freq[i] = factor >= kUnrotatedFactor ? 0.0f : static_cast<float>(base / factor);
  }
  return Rope(head_dim, n_rot, std::move(inv_freq));
}

Rope Rope::Proportional(int head_dim, float theta, float partial_rotary_factor) {
  CheckRopeShape(head_dim, head_dim, theta);
  if (!(partial_rotary_factor > 0.0f && partial_rotary_factor <= 1.0f)) {
    Fail(ErrorKind::kInvalidArgument, "RoPE: partial_rotary_factor must be in (0, 1], got " +
                                          std::to_string(partial_rotary_factor));
  }
  const int half = head_dim / 2;
  // HF: rope_angles = int(partial_rotary_factor * head_dim // 2).
  const int n_angles = static_cast<int>(static_cast<double>(partial_rotary_factor) * head_dim / 2);
  std::vector<float> inv_freq(half, 0.0f);
  for (int i = 0; i < n_angles && i < half; ++i) {
    inv_freq[i] = static_cast<float>(std::pow(static_cast<double>(theta), -2.0 * i / head_dim));
  }
  return Rope(head_dim, head_dim, std::move(inv_freq));
}

Rope::Rope(int head_dim, int n_rot, std::vector<float> inv_freq)
    : head_dim_(head_dim), n_rot_(n_rot), inv_freq_(std::move(inv_freq)) {
  const int half = n_rot_ / 2;
  for (int i = 0; i < half;) {
    if (inv_freq_[i] == 0.0f) {  // un-rotated (3/4 of Gemma 4's global pairs)
      ++i;
      continue;
    }
    int end = i + 1;
    while (end < half && inv_freq_[end] != 0.0f) ++end;
    runs_.push_back({i, end});
    i = end;
  }
}

void Rope::Angles(const int32_t* positions, int64_t n_rows, float* out) const {
  const int half = n_rot_ / 2;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float pos = static_cast<float>(positions[r]);
    float* cos_v = out + r * n_rot_;
    float* sin_v = cos_v + half;
    for (const auto& [begin, end] : runs_) {
      for (int i = begin; i < end; ++i) {
        const float angle = pos * inv_freq_[i];  // f32 product, as HF computes freqs
        cos_v[i] = static_cast<float>(std::cos(static_cast<double>(angle)));
        sin_v[i] = static_cast<float>(std::sin(static_cast<double>(angle)));
      }
    }
  }
}

void Rope::ApplyAngles(float* x, int64_t n_rows, size_t row_stride, int n_heads,
                       const float* angles) const {
  const int half = n_rot_ / 2;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* cos_v = angles + r * n_rot_;
    const float* sin_v = cos_v + half;
    float* row = x + r * row_stride;
    for (int h = 0; h < n_heads; ++h) {
      float* head = row + static_cast<size_t>(h) * head_dim_;
      // Un-rotated pairs (outside the runs) pass through exactly.
      for (const auto& [begin, end] : runs_) {
        for (int i = begin; i < end; ++i) {
          const float x0 = head[i];
          const float x1 = head[i + half];
          head[i] = x0 * cos_v[i] - x1 * sin_v[i];
          head[i + half] = x0 * sin_v[i] + x1 * cos_v[i];
        }
      }
    }
  }
}

void Rope::Apply(float* x, int64_t n_rows, size_t row_stride, int n_heads,
                 const int32_t* positions) const {
  std::vector<float> angles(static_cast<size_t>(n_rows) * n_rot_);
  Angles(positions, n_rows, angles.data());
  ApplyAngles(x, n_rows, row_stride, n_heads, angles.data());
}

}  // namespace tandem::kernels
