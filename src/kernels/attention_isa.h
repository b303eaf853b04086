// Per-ISA inner loop of attention (ref/ and, from simd/attention-inl.h, avx2/ and avx512/ each
// define it). Internal: callers use attention.h, which validates arguments, splits work and
// dispatches through the active ISA's KernelTable (isa.h).
#pragma once

#include "kernels/kv_types.h"

namespace tandem::kernels {
// Most query heads one AttendHeads call takes.
inline constexpr int kAttendMaxHeads = 8;

// Where AttendHeads leaves a split's softmax state (attention.h § splits) instead of the
// normalised output: out[g·head_dim, +head_dim) then holds Σ_j p_j·v_j with p_j =
// exp(score_j − max_score[g]), and sum[g] = Σ_j p_j.
struct AttendSplitState {
  float* max_score;  // [n_heads]
  float* sum;        // [n_heads]
};

// One head's block of query rows for AttendDenseRows: every row sees all n_keys keys.
struct DenseRows {
  int n_rows = 0;
  const float* q = nullptr;  // row r at q + r·q_stride, head_dim values
  size_t q_stride = 0;
  const float* kt = nullptr;  // K transposed: value d of key j at kt + d·kt_stride + j
  size_t kt_stride = 0;
  int n_keys = 0;
  int head_dim = 0;
  const float* v = nullptr;  // key j's v_dim values at v + j·v_stride
  size_t v_stride = 0;
  int v_dim = 0;  // a multiple of 16
  float scale = 1.0f;
  float* out = nullptr;  // row r at out + r·out_stride, v_dim values
  size_t out_stride = 0;
  // DenseScratchValues(n_keys, v_dim) floats owned by the calling thread (kept out of the ISA
  // translation units, which must not instantiate library templates a baseline unit also uses).
  float* scratch = nullptr;
};

// Every ISA's dense block holds at most kDenseMaxRows rows and scores at most kDenseMaxKeyStep
// keys at a time.
inline constexpr int kDenseMaxRows = 6;
inline constexpr int kDenseMaxKeyStep = 64;
// Floats of DenseRows::scratch: a block's score rows (keys rounded up to whole steps) and its
// spare output rows.
inline size_t DenseScratchValues(int n_keys, int v_dim) {
  return static_cast<size_t>(kDenseMaxRows) *
         (static_cast<size_t>(n_keys) + kDenseMaxKeyStep + static_cast<size_t>(v_dim));
}
}  // namespace tandem::kernels

// For each query head g in [0, n_heads) (1 <= n_heads <= kAttendMaxHeads), all reading kv head
// kv_head: out[g·head_dim, +head_dim) = softmax over `keys` of (q_g · K[key] · scale) times V,
// where q_g = q + g·head_dim. Streaming softmax over blocks of kAttentionKeyBlock keys counted
// from keys.begin, ascending. Heads share the K/V loads, but each head's arithmetic is the same
// whatever n_heads is, so callers may group heads freely.
// With `split` non-null, out holds the unnormalised state and split its maxima and sums.
// Preconditions (checked by Attention): the keys are stored in kv, keys non-empty, head_dim valid.
// AttendDenseRows: out row r = softmax over the keys of (q_r · k_j · scale) times V, each row on
// its own (rows may be grouped freely; simd/dense_attention-inl.h gives the order).
#define TANDEM_KERNELS_DECLARE_ATTENTION()                                                    \
  void AttendHeads(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys, \
                   float scale, float* out, const AttendSplitState* split);                   \
  void AttendDenseRows(const DenseRows& rows);

namespace tandem::kernels::ref {
TANDEM_KERNELS_DECLARE_ATTENTION()
}  // namespace tandem::kernels::ref

namespace tandem::kernels::avx2 {
TANDEM_KERNELS_DECLARE_ATTENTION()
}  // namespace tandem::kernels::avx2

namespace tandem::kernels::avx512 {
TANDEM_KERNELS_DECLARE_ATTENTION()
}  // namespace tandem::kernels::avx512

#undef TANDEM_KERNELS_DECLARE_ATTENTION
