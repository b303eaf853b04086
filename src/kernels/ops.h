// The non-matmul row ops of a Gemma 4 layer: RMSNorm, GELU-tanh / GeGLU (and the GELU-quick
// GeGLU llama.cpp's vision towers default to), soft-capping, softmax, elementwise add/scale and
// NEOX RoPE (plain and Gemma 4's proportional partial variant).
//
// Numerics: every op works row by row and a row's result depends only on that row's values,
// its length and the active ISA (kernels/isa.h) -- never on the batch, the row's place in it, its
// address or the thread count. Reductions (sum of squares, softmax sum) run in one fixed order
// per ISA. The scalar path (ref/) is the oracle; AVX2/AVX-512 agree with it to a small NMSE.
// Kernels do not validate their inputs (hot path): n >= 0 and pointers to n floats. In-place
// use (y == x) is allowed everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tandem {
class ThreadPool;
}

namespace tandem::kernels {

// y = x / sqrt(mean(x²) + eps) ⊙ weight, computed in f32 (Gemma 4's gain is used as is, no
// 1 + w). weight == nullptr means no gain (Gemma 4's V-norm and router norm).
// x, y, weight: [n].
void RmsNorm(const float* x, const float* weight, float eps, int64_t n, float* y);

// RmsNorm on n_rows rows of n values: row r is x[r * x_stride .. + n) -> y[r * y_stride ..).
// Per-head norms (q/k/v norm) are rows of head_dim. Rows are spread over `pool` when given.
void RmsNormRows(const float* x, size_t x_stride, const float* weight, float eps, int64_t n,
                 int64_t n_rows, float* y, size_t y_stride, ThreadPool* pool = nullptr);

// GELU, tanh approximation ("gelu_pytorch_tanh") evaluated in f32:
//   gelu(x) = 0.5·x·(1 + tanh(u)), u = sqrt(2/π)·(x + 0.044715·x³),
// computed as the identical x / (1 + e^(-2u)), which avoids the cancellation of 1 + tanh(u) for
// negative x. (llama.cpp instead looks the value up in an fp16 table, rounding input and
// output to fp16; tandem does not emulate that.)
// x, y: [n].
void Gelu(const float* x, int64_t n, float* y);

// y = gelu(gate) ⊙ up (Gemma's GeGLU FFN and the PLE gate). gate, up, y: [n].
void GeGlu(const float* gate, const float* up, int64_t n, float* y);
// The same, long rows spread over `pool` in chunks (an element's result is the same wherever it
// is computed).
void GeGlu(const float* gate, const float* up, int64_t n, float* y, ThreadPool& pool);

// y = silu(x) = x·sigmoid(x), evaluated in f32 as x / (1 + e^(-x)) (the audio conformer's
// activation). x, y: [n].
void Silu(const float* x, int64_t n, float* y);
// y = value ⊙ sigmoid(gate), evaluated in f32 as value / (1 + e^(-gate)) (the conformer's GLU).
// value, gate, y: [n].
void SigmoidGlu(const float* value, const float* gate, int64_t n, float* y);

// y = gelu_quick(gate) ⊙ up with gelu_quick(x) = x·sigmoid(1.702·x), evaluated in f32 as
// x / (1 + e^(-1.702·x)) with std::exp: the GELU approximation llama.cpp's vision towers use
// by default. One plain implementation for every ISA (the same bits on each). gate, up, y: [n].
void GeGluQuick(const float* gate, const float* up, int64_t n, float* y);
// The same, long rows spread over `pool` in chunks.
void GeGluQuick(const float* gate, const float* up, int64_t n, float* y, ThreadPool& pool);

// y = fp16(x), round to nearest even, bitwise tensor/float16.h's Fp32ToFp16 on every path (the
// f16 KV cache's rows). x: [n], y: [n].
void ToHalf(const float* x, int64_t n, uint16_t* y);

// y = cap · tanh(x / cap) (Gemma 4's final-logit soft-cap, cap = 30). cap > 0. x, y: [n].
void Softcap(const float* x, float cap, int64_t n, float* y);
// The same, long rows (a vocabulary's logits) spread over `pool` in chunks.
void Softcap(const float* x, float cap, int64_t n, float* y, ThreadPool& pool);

// y = exp(x - max x) / Σ exp(x - max x). n >= 1. x, y: [n].
void Softmax(const float* x, int64_t n, float* y);

// y = a + b and y = s · x, elementwise (exact: identical on every ISA). [n].
void Add(const float* a, const float* b, int64_t n, float* y);
void Scale(const float* x, float s, int64_t n, float* y);

// Rotary position embedding with NEOX ("rotate_half") pairing, for one layer type.
// Pair i (0 <= i < n_rot/2) is dims (i, i + n_rot/2), rotated by angle pos · inv_freq[i];
// dims >= n_rot pass through. The angle is the f32 product (as HF computes it) and its cos/sin are
// rounded from double, so they are the same on every ISA.
class Rope {
 public:
  // ggml-style NEOX RoPE: inv_freq[i] = theta^(-2i / n_rot) / freq_factors[i]. freq_factors is
  // empty (all 1) or has n_rot/2 entries (GGUF `rope_freqs.weight`); a factor >= 1e30 marks its
  // pair as un-rotated (exactly passed through). Throws Error(kInvalidArgument) unless
  // 0 < n_rot <= head_dim, n_rot even, theta > 0 and factors > 0.
  static Rope Neox(int head_dim, int n_rot, float theta, std::span<const float> freq_factors = {});

  // Gemma 4 "proportional" RoPE (full-attention layers), computed natively: n_rot = head_dim,
  // inv_freq[i] = theta^(-2i / head_dim) for i < int(partial_rotary_factor · head_dim / 2) and 0
  // (un-rotated) beyond. Gemma 4: head_dim 512, theta 1e6, factor 0.25 -> pairs (i, i+256), i < 64.
  // Identical to Neox(head_dim, head_dim, theta, {1 x 64, 1e30 x 192}).
  static Rope Proportional(int head_dim, float theta, float partial_rotary_factor);

  // Rotates x in place. x: [n_rows][n_heads][head_dim] floats, row r starting at
  // x + r * row_stride; row r is at position positions[r] (absolute, >= 0).
  void Apply(float* x, int64_t n_rows, size_t row_stride, int n_heads,
             const int32_t* positions) const;

  // The rotations of n_rows positions, for ApplyAngles: row r's n_rot floats at out + r * n_rot
  // are the cosines then the sines of its pairs' angles (an un-rotated pair's are not written).
  // Ropes that compare equal have the same angles, so layers can share one table per batch.
  void Angles(const int32_t* positions, int64_t n_rows, float* out) const;
  // Apply with the rows' angles from Angles(): the same bits as Apply.
  void ApplyAngles(float* x, int64_t n_rows, size_t row_stride, int n_heads,
                   const float* angles) const;
  bool operator==(const Rope& other) const {
    return head_dim_ == other.head_dim_ && n_rot_ == other.n_rot_ && inv_freq_ == other.inv_freq_;
  }

  int head_dim() const { return head_dim_; }
  int n_rot() const { return n_rot_; }
  // [n_rot / 2]; 0 marks an un-rotated pair.
  const std::vector<float>& inv_freq() const { return inv_freq_; }

 private:
  Rope(int head_dim, int n_rot, std::vector<float> inv_freq);

  int head_dim_;
  int n_rot_;
  std::vector<float> inv_freq_;
  std::vector<std::pair<int, int>> runs_;  // [begin, end) of consecutive rotated pairs
};

}  // namespace tandem::kernels
