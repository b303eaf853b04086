// AVX-512 attention inner loop: streaming softmax of a few query heads over the visible
// keys of their KV head, K/V rows decoded 16 values at a time straight from the cache type.
//
// Fixed orders: a score is q·k summed in two 16-lane accumulators (even/odd 16-value chunks)
// combined at the end; each output value accumulates its keys in ascending position. Scores of
// up to four keys are computed side by side, and the query heads sharing a KV head reuse each
// loaded block; neither changes any key's or head's order of operations.
// GCC 12 reports its own AVX-512 intrinsics' _mm512_undefined_*() as (maybe-)uninitialized
// (GCC bug 105593); the warning's location is inside the header, so silence it there.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>

#include "kernels/attention.h"
#include "kernels/attention_isa.h"
#include "kernels/ops_isa.h"
#include "tensor/blocks.h"

namespace tandem::kernels::avx512 {
namespace {

inline float HorizontalSum(__m512 v) {
  const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                                 _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Loaders: values [i, i + 16) of a cache row (i a multiple of 16) as one f32 vector.
struct LoadF32 {
  static __m512 Load(const uint8_t* row, int i) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + i);
  }
};

struct LoadF16 {
  static __m512 Load(const uint8_t* row, int i) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i)));
  }
};

struct LoadBF16 {
  static __m512 Load(const uint8_t* row, int i) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * i));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(w), 16));
  }
};

struct LoadQ8_0 {
  static __m512 Load(const uint8_t* row, int i) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row) + i / kQK8_0;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + i % kQK8_0));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)),
                         _mm512_set1_ps(_cvtsh_ss(b->d)));
  }
};

struct LoadQ4_0 {
  static __m512 Load(const uint8_t* row, int i) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + i / kQK4_0;
    __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
    if (i % kQK4_0 != 0) bytes = _mm_srli_epi16(bytes, 4);  // elements 16..31: high nibbles
    const __m128i q = _mm_sub_epi8(_mm_and_si128(bytes, _mm_set1_epi8(0x0F)), _mm_set1_epi8(8));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)),
                         _mm512_set1_ps(_cvtsh_ss(b->d)));
  }
};

// scores[j] = scale · q·K[rows[j]] for N keys side by side.
template <typename L, int N>
inline void Scores(const float* q, const uint8_t* const* rows, int hd, float scale, float* scores) {
  __m512 acc0[N], acc1[N];
  for (int j = 0; j < N; ++j) acc0[j] = acc1[j] = _mm512_setzero_ps();
  int i = 0;
  for (; i + 32 <= hd; i += 32) {
    const __m512 q0 = _mm512_loadu_ps(q + i), q1 = _mm512_loadu_ps(q + i + 16);
    for (int j = 0; j < N; ++j) {
      acc0[j] = _mm512_fmadd_ps(q0, L::Load(rows[j], i), acc0[j]);
      acc1[j] = _mm512_fmadd_ps(q1, L::Load(rows[j], i + 16), acc1[j]);
    }
  }
  if (i < hd) {  // one last chunk of 16
    const __m512 q0 = _mm512_loadu_ps(q + i);
    for (int j = 0; j < N; ++j) acc0[j] = _mm512_fmadd_ps(q0, L::Load(rows[j], i), acc0[j]);
  }
  for (int j = 0; j < N; ++j) scores[j] = HorizontalSum(_mm512_add_ps(acc0[j], acc1[j])) * scale;
}

// acc[0, 16·NV) = acc · alpha + Σ_j p[j] · V_j[i, i + 16·NV), keys j ascending. NV independent
// accumulator chains per key hide the FMA latency; each value's own sum order is unchanged.
template <typename L, int NV>
inline void AccumulateV(float* acc, int i, const uint8_t* const* rows, const float* p, int n,
                        __m512 alpha) {
  __m512 a[NV];
  for (int v = 0; v < NV; ++v) a[v] = _mm512_mul_ps(_mm512_load_ps(acc + 16 * v), alpha);
  for (int j = 0; j < n; ++j) {
    const __m512 pj = _mm512_set1_ps(p[j]);
    for (int v = 0; v < NV; ++v) a[v] = _mm512_fmadd_ps(pj, L::Load(rows[j], i + 16 * v), a[v]);
  }
  for (int v = 0; v < NV; ++v) _mm512_store_ps(acc + 16 * v, a[v]);
}

template <typename L>
void Attend(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys, float scale,
            float* out) {
  const int hd = kv.head_dim;
  // Per head g: acc[g] = Σ p_j · v_j of the keys so far and sum[g] = Σ p_j, both relative to
  // max_score[g]; p[g] = the current block's weights.
  alignas(64) float acc[kAttendMaxHeads][kMaxHeadDim];
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
    for (; i + 128 <= hd; i += 128) {
      for (int g = 0; g < n_heads; ++g) {
        AccumulateV<L, 8>(acc[g] + i, i, rows, p[g], n, _mm512_set1_ps(alpha[g]));
      }
    }
    for (; i + 64 <= hd; i += 64) {
      for (int g = 0; g < n_heads; ++g) {
        AccumulateV<L, 4>(acc[g] + i, i, rows, p[g], n, _mm512_set1_ps(alpha[g]));
      }
    }
    for (; i + 16 <= hd; i += 16) {
      for (int g = 0; g < n_heads; ++g) {
        AccumulateV<L, 1>(acc[g] + i, i, rows, p[g], n, _mm512_set1_ps(alpha[g]));
      }
    }
  }
  for (int g = 0; g < n_heads; ++g) {
    const __m512 inv_sum = _mm512_set1_ps(1.0f / sum[g]);
    for (int i = 0; i < hd; i += 16) {
      _mm512_storeu_ps(out + g * hd + i, _mm512_mul_ps(_mm512_load_ps(acc[g] + i), inv_sum));
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

}  // namespace tandem::kernels::avx512
