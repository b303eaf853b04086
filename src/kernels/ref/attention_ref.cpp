// Scalar attention inner loop: streaming softmax over one head's visible keys. The oracle for
// the SIMD paths.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/attention.h"
#include "kernels/attention_isa.h"
#include "tensor/dequantize.h"

namespace tandem::kernels::ref {
namespace {

// Row `row` (head_dim values of kv.type) as f32: a pointer into the cache for f32, else decoded
// into `scratch`.
const float* RowAsF32(const KvView& kv, const uint8_t* row, float* scratch) {
  if (kv.type == TensorType::kF32) return reinterpret_cast<const float*>(row);
  DequantizeRow(kv.type, row, scratch, kv.head_dim);
  return scratch;
}

// One head; AttendHeads runs it head by head.
void AttendHead(const float* q, const KvView& kv, int kv_head, KeyRange keys, float scale,
                float* out, float* max_out, float* sum_out) {
  const int hd = kv.head_dim;
  float scratch[kMaxHeadDim];
  float acc[kMaxHeadDim];  // Σ p_j · v_j of the keys so far, relative to max_score
  float p[kAttentionKeyBlock];
  std::fill(acc, acc + hd, 0.0f);
  float max_score = -INFINITY;
  float sum = 0.0f;  // Σ p_j so far, relative to max_score

  for (int32_t block = keys.begin; block < keys.end; block += kAttentionKeyBlock) {
    const int n = std::min<int32_t>(kAttentionKeyBlock, keys.end - block);
    float block_max = -INFINITY;
    for (int j = 0; j < n; ++j) {
      const float* k = RowAsF32(kv, kv.KRow(block + j, kv_head), scratch);
      float dot = 0.0f;
      for (int d = 0; d < hd; ++d) dot += q[d] * k[d];
      p[j] = dot * scale;
      block_max = std::fmax(block_max, p[j]);
    }
    const float new_max = std::fmax(max_score, block_max);
    const float alpha = block == keys.begin ? 0.0f : std::exp(max_score - new_max);
    float block_sum = 0.0f;
    for (int j = 0; j < n; ++j) {
      p[j] = std::exp(p[j] - new_max);
      block_sum += p[j];
    }
    sum = sum * alpha + block_sum;
    for (int d = 0; d < hd; ++d) acc[d] *= alpha;
    for (int j = 0; j < n; ++j) {
      const float* v = RowAsF32(kv, kv.VRow(block + j, kv_head), scratch);
      for (int d = 0; d < hd; ++d) acc[d] += p[j] * v[d];
    }
    max_score = new_max;
  }
  if (max_out != nullptr) {  // a split's state
    std::copy(acc, acc + hd, out);
    *max_out = max_score;
    *sum_out = sum;
    return;
  }
  const float inv_sum = 1.0f / sum;
  for (int d = 0; d < hd; ++d) out[d] = acc[d] * inv_sum;
}

}  // namespace

void AttendDenseRows(const DenseRows& a) {
  std::vector<float> p(static_cast<size_t>(a.n_keys));
  for (int r = 0; r < a.n_rows; ++r) {
    const float* q = a.q + static_cast<size_t>(r) * a.q_stride;
    float max = -INFINITY;
    for (int j = 0; j < a.n_keys; ++j) {
      float dot = 0.0f;
      for (int d = 0; d < a.head_dim; ++d)
        dot += q[d] * a.kt[static_cast<size_t>(d) * a.kt_stride + j];
      p[j] = dot * a.scale;
      max = std::fmax(max, p[j]);
    }
    float sum = 0.0f;
    for (int j = 0; j < a.n_keys; ++j) {
      p[j] = std::exp(p[j] - max);
      sum += p[j];
    }
    float* out = a.out + static_cast<size_t>(r) * a.out_stride;
    std::fill(out, out + a.v_dim, 0.0f);
    for (int j = 0; j < a.n_keys; ++j) {
      const float* v = a.v + static_cast<size_t>(j) * a.v_stride;
      for (int i = 0; i < a.v_dim; ++i) out[i] += p[j] * v[i];
    }
    const float inv_sum = 1.0f / sum;
    for (int i = 0; i < a.v_dim; ++i) out[i] *= inv_sum;
  }
}

void AttendHeads(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys,
                 float scale, float* out, const AttendSplitState* split) {
  for (int g = 0; g < n_heads; ++g) {
    AttendHead(q + g * kv.head_dim, kv, kv_head, keys, scale, out + g * kv.head_dim,
               split != nullptr ? split->max_score + g : nullptr,
               split != nullptr ? split->sum + g : nullptr);
  }
}

}  // namespace tandem::kernels::ref
