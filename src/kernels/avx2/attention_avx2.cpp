// AVX2 + FMA + F16C attention inner loop: streaming softmax of a few query heads over the
// visible keys of their KV head, K/V rows decoded 16 values at a time from the cache type.
//
// Fixed orders: a score is q·k summed in two 8-lane accumulators (even/odd 8-value chunks)
// combined at the end; each output value accumulates its keys in ascending position. Scores of
// up to four keys are computed side by side, and the query heads sharing a KV head reuse each
// loaded block; neither changes any key's or head's order of operations.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/attention_isa.h"
#include "kernels/ops_isa.h"
#include "tensor/blocks.h"

namespace tandem::kernels::avx2 {
namespace {

inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Loaders: values [i, i + 16) of a cache row (i a multiple of 16) as two f32 vectors.
struct LoadF32 {
  static void Load(const uint8_t* row, int i, __m256* lo, __m256* hi) {
    const float* f = reinterpret_cast<const float*>(row) + i;
    *lo = _mm256_loadu_ps(f);
    *hi = _mm256_loadu_ps(f + 8);
  }
};

struct LoadF16 {
  static void Load(const uint8_t* row, int i, __m256* lo, __m256* hi) {
    const __m128i* h = reinterpret_cast<const __m128i*>(row + 2 * i);
    *lo = _mm256_cvtph_ps(_mm_loadu_si128(h));
    *hi = _mm256_cvtph_ps(_mm_loadu_si128(h + 1));
  }
};

struct LoadBF16 {
  static void Load(const uint8_t* row, int i, __m256* lo, __m256* hi) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i));
    *lo = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(w)), 16));
    *hi = _mm256_castsi256_ps(
        _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(w, 1)), 16));
  }
};

// 16 signed 8-bit quants times d.
inline void ScaleQuants(__m128i q, float d, __m256* lo, __m256* hi) {
  const __m256 vd = _mm256_set1_ps(d);
  *lo = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), vd);
  *hi = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8))), vd);
}

struct LoadQ8_0 {
  static void Load(const uint8_t* row, int i, __m256* lo, __m256* hi) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row) + i / kQK8_0;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + i % kQK8_0));
    ScaleQuants(q, _cvtsh_ss(b->d), lo, hi);
  }
};

struct LoadQ4_0 {
  static void Load(const uint8_t* row, int i, __m256* lo, __m256* hi) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + i / kQK4_0;
    __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
    if (i % kQK4_0 != 0) bytes = _mm_srli_epi16(bytes, 4);  // elements 16..31: high nibbles
    const __m128i q = _mm_sub_epi8(_mm_and_si128(bytes, _mm_set1_epi8(0x0F)), _mm_set1_epi8(8));
    ScaleQuants(q, _cvtsh_ss(b->d), lo, hi);
  }
};

// scores[j] = scale · q·K[rows[j]] for N keys side by side.
template <typename L, int N>
inline void Scores(const float* q, const uint8_t* const* rows, int hd, float scale, float* scores) {
  __m256 acc0[N], acc1[N];
  for (int j = 0; j < N; ++j) acc0[j] = acc1[j] = _mm256_setzero_ps();
  for (int i = 0; i < hd; i += 16) {
    const __m256 q0 = _mm256_loadu_ps(q + i), q1 = _mm256_loadu_ps(q + i + 8);
    for (int j = 0; j < N; ++j) {
      __m256 k0, k1;
      L::Load(rows[j], i, &k0, &k1);
      acc0[j] = _mm256_fmadd_ps(q0, k0, acc0[j]);
      acc1[j] = _mm256_fmadd_ps(q1, k1, acc1[j]);
    }
  }
  for (int j = 0; j < N; ++j) scores[j] = HorizontalSum(_mm256_add_ps(acc0[j], acc1[j])) * scale;
}

// acc[0, 16·NC) = acc · alpha + Σ_j p[j] · V_j[i, i + 16·NC), keys j ascending. 2·NC independent
// accumulator chains per key hide the FMA latency; each value's own sum order is unchanged.
template <typename L, int NC>
inline void AccumulateV(float* acc, int i, const uint8_t* const* rows, const float* p, int n,
                        __m256 alpha) {
  __m256 a[2 * NC];
  for (int v = 0; v < 2 * NC; ++v) a[v] = _mm256_mul_ps(_mm256_load_ps(acc + 8 * v), alpha);
  for (int j = 0; j < n; ++j) {
    const __m256 pj = _mm256_set1_ps(p[j]);
    for (int c = 0; c < NC; ++c) {
      __m256 v0, v1;
      L::Load(rows[j], i + 16 * c, &v0, &v1);
      a[2 * c] = _mm256_fmadd_ps(pj, v0, a[2 * c]);
      a[2 * c + 1] = _mm256_fmadd_ps(pj, v1, a[2 * c + 1]);
    }
  }
  for (int v = 0; v < 2 * NC; ++v) _mm256_store_ps(acc + 8 * v, a[v]);
}

template <typename L>
void Attend(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys, float scale,
            float* out) {
  const int hd = kv.head_dim;
  // Per head g: acc[g] = Σ p_j · v_j of the keys so far and sum[g] = Σ p_j, both relative to
  // max_score[g]; p[g] = the current block's weights.
  alignas(32) float acc[kAttendMaxHeads][kMaxHeadDim];
  float p[kAttendMaxHeads][kAttentionKeyBlock];
  float max_score[kAttendMaxHeads], sum[kAttendMaxHeads], alpha[kAttendMaxHeads];
  const uint8_t* rows[kAttentionKeyBlock];
  for (int g = 0; g < n_heads; ++g) {
    std::fill(acc[g], acc[g] + hd, 0.0f);
    max_score[g] = -INFINITY;
    sum[g] = 0.0f;
  }

  for (int32_t block = keys.begin; block < keys.end; block += kAttentionKeyBlock) {
    const int n = std::min<int32_t>(kAttentionKeyBlock, keys.end - block);
    for (int j = 0; j < n; ++j) rows[j] = kv.KRow(block + j, kv_head);
    int j = 0;
    for (; j + 4 <= n; j += 4) {
      for (int g = 0; g < n_heads; ++g) Scores<L, 4>(q + g * hd, rows + j, hd, scale, p[g] + j);
    }
    for (; j < n; ++j) {
      for (int g = 0; g < n_heads; ++g) Scores<L, 1>(q + g * hd, rows + j, hd, scale, p[g] + j);
    }
    for (int g = 0; g < n_heads; ++g) {
      float block_max = -INFINITY;
      for (j = 0; j < n; ++j) block_max = std::fmax(block_max, p[g][j]);
      const float new_max = std::fmax(max_score[g], block_max);
      alpha[g] = block == keys.begin ? 0.0f : std::exp(max_score[g] - new_max);
      for (j = 0; j < n; ++j) p[g][j] -= new_max;
      Exp(p[g], n, p[g]);
      float block_sum = 0.0f;
      for (j = 0; j < n; ++j) block_sum += p[g][j];
      sum[g] = sum[g] * alpha[g] + block_sum;
      max_score[g] = new_max;
    }

    for (j = 0; j < n; ++j) rows[j] = kv.VRow(block + j, kv_head);
    int i = 0;
    for (; i + 64 <= hd; i += 64) {
      for (int g = 0; g < n_heads; ++g) {
        AccumulateV<L, 4>(acc[g] + i, i, rows, p[g], n, _mm256_set1_ps(alpha[g]));
      }
    }
    for (; i + 16 <= hd; i += 16) {
      for (int g = 0; g < n_heads; ++g) {
        AccumulateV<L, 1>(acc[g] + i, i, rows, p[g], n, _mm256_set1_ps(alpha[g]));
      }
    }
  }
  for (int g = 0; g < n_heads; ++g) {
    const __m256 inv_sum = _mm256_set1_ps(1.0f / sum[g]);
    for (int i = 0; i < hd; i += 8) {
      _mm256_storeu_ps(out + g * hd + i, _mm256_mul_ps(_mm256_load_ps(acc[g] + i), inv_sum));
    }
  }
}

}  // namespace

void AttendHeads(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys,
                 float scale, float* out) {
  switch (kv.type) {
    case TensorType::kF16:
      return Attend<LoadF16>(q, n_heads, kv, kv_head, keys, scale, out);
    case TensorType::kBF16:
      return Attend<LoadBF16>(q, n_heads, kv, kv_head, keys, scale, out);
    case TensorType::kQ8_0:
      return Attend<LoadQ8_0>(q, n_heads, kv, kv_head, keys, scale, out);
    case TensorType::kQ4_0:
      return Attend<LoadQ4_0>(q, n_heads, kv, kv_head, keys, scale, out);
    default:
      return Attend<LoadF32>(q, n_heads, kv, kv_head, keys, scale, out);
  }
}

}  // namespace tandem::kernels::avx2
