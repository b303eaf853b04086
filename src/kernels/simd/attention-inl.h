// The attention inner loop (attention_isa.h) over a vector trait V (vec_trait.h), for the ISA
// translation units only: streaming softmax of a few query heads over the visible keys of their
// KV head, K/V rows decoded 16 values at a time straight from the cache type.
//
// Fixed orders: a score is q·k summed in two accumulators, vector c of the row (values
// [c·kLanes, (c + 1)·kLanes)) going to accumulator c % 2, combined at the end; each output value
// accumulates its keys in ascending position. Scores of up to four keys are computed side by
// side, and the query heads sharing a KV head reuse each loaded block; neither changes any key's
// or head's order of operations.
#pragma once

#include <emmintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/attention.h"
#include "kernels/attention_isa.h"
#include "kernels/simd/ops-inl.h"
#include "kernels/simd/vec_trait.h"
#include "tensor/blocks.h"

namespace tandem::kernels::simd {

// Loaders: values [i, i + 16) of a cache row (i a multiple of 16) as V::kPer16 f32 vectors.
template <VecTrait V>
struct LoadF32 {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    const float* f = reinterpret_cast<const float*>(row) + i;
    for (int k = 0; k < V::kPer16; ++k) out[k] = V::Load(f + k * V::kLanes);
  }
};

template <VecTrait V>
struct LoadF16 {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    for (int k = 0; k < V::kPer16; ++k) out[k] = V::LoadF16(row + 2 * (i + k * V::kLanes));
  }
};

template <VecTrait V>
struct LoadBF16 {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    for (int k = 0; k < V::kPer16; ++k) out[k] = V::LoadBF16(row + 2 * (i + k * V::kLanes));
  }
};

// 16 signed 8-bit quants times d.
template <VecTrait V>
inline void ScaleQuants(__m128i q, uint16_t d, typename V::V* out) {
  const auto vd = V::Set1(V::HalfToFloat(d));
  V::I8x16ToF32(q, out);
  for (int k = 0; k < V::kPer16; ++k) out[k] = V::Mul(out[k], vd);
}

template <VecTrait V>
struct LoadQ8_0 {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row) + i / kQK8_0;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + i % kQK8_0));
    ScaleQuants<V>(q, b->d, out);
  }
};

template <VecTrait V>
struct LoadQ4_0 {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + i / kQK4_0;
    __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
    if (i % kQK4_0 != 0) bytes = _mm_srli_epi16(bytes, 4);  // elements 16..31: high nibbles
    const __m128i q = _mm_sub_epi8(_mm_and_si128(bytes, _mm_set1_epi8(0x0F)), _mm_set1_epi8(8));
    ScaleQuants<V>(q, b->d, out);
  }
};

// scores[j] = scale · q·K[rows[j]] for N keys side by side.
template <VecTrait V, typename L, int N>
inline void Scores(const float* q, const uint8_t* const* rows, int hd, float scale, float* scores) {
  constexpr int kL = V::kLanes;
  typename V::V acc0[N], acc1[N];
  for (int j = 0; j < N; ++j) acc0[j] = acc1[j] = V::Zero();
  int i = 0;
  for (; i + 2 * kL <= hd; i += 2 * kL) {  // one vector into each accumulator
    const auto q0 = V::Load(q + i), q1 = V::Load(q + i + kL);
    for (int j = 0; j < N; ++j) {
      typename V::V k[2];
      for (int u = 0; u < 2 / V::kPer16; ++u) L::Load(rows[j], i + 16 * u, k + u * V::kPer16);
      acc0[j] = V::MulAdd(q0, k[0], acc0[j]);
      acc1[j] = V::MulAdd(q1, k[1], acc1[j]);
    }
  }
  if constexpr (V::kPer16 == 1) {
    if (i < hd) {  // one last chunk of 16: an even vector
      const auto q0 = V::Load(q + i);
      for (int j = 0; j < N; ++j) {
        typename V::V k[1];
        L::Load(rows[j], i, k);
        acc0[j] = V::MulAdd(q0, k[0], acc0[j]);
      }
    }
  }
  for (int j = 0; j < N; ++j) scores[j] = V::ReduceSum(V::Add(acc0[j], acc1[j])) * scale;
}

// acc[0, 16·NU) = acc · alpha + Σ_j p[j] · V_j[i, i + 16·NU), keys j ascending. NU·kPer16
// independent accumulator chains per key hide the FMA latency; each value's own sum order is
// unchanged.
template <VecTrait V, typename L, int NU>
inline void AccumulateV(float* acc, int i, const uint8_t* const* rows, const float* p, int n,
                        typename V::V alpha) {
  constexpr int kNV = NU * V::kPer16;
  typename V::V a[kNV];
  for (int v = 0; v < kNV; ++v) a[v] = V::Mul(V::LoadAligned(acc + V::kLanes * v), alpha);
  for (int j = 0; j < n; ++j) {
    const auto pj = V::Set1(p[j]);
    for (int u = 0; u < NU; ++u) {
      typename V::V vals[V::kPer16];
      L::Load(rows[j], i + 16 * u, vals);
      for (int k = 0; k < V::kPer16; ++k) {
        a[u * V::kPer16 + k] = V::MulAdd(pj, vals[k], a[u * V::kPer16 + k]);
      }
    }
  }
  for (int v = 0; v < kNV; ++v) V::StoreAligned(acc + V::kLanes * v, a[v]);
}

template <VecTrait V, typename L>
void Attend(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys, float scale,
            float* out) {
  const int hd = kv.head_dim;
  // Per head g: acc[g] = Σ p_j · v_j of the keys so far and sum[g] = Σ p_j, both relative to
  // max_score[g]; p[g] = the current block's weights.
  alignas(sizeof(typename V::V)) float acc[kAttendMaxHeads][kMaxHeadDim];
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
      for (int g = 0; g < n_heads; ++g) Scores<V, L, 4>(q + g * hd, rows + j, hd, scale, p[g] + j);
    }
    for (; j < n; ++j) {
      for (int g = 0; g < n_heads; ++g) Scores<V, L, 1>(q + g * hd, rows + j, hd, scale, p[g] + j);
    }
    for (int g = 0; g < n_heads; ++g) {
      float block_max = -INFINITY;
      for (j = 0; j < n; ++j) block_max = std::fmax(block_max, p[g][j]);
      const float new_max = std::fmax(max_score[g], block_max);
      alpha[g] = block == keys.begin ? 0.0f : std::exp(max_score[g] - new_max);
      for (j = 0; j < n; ++j) p[g][j] -= new_max;
      Map<V>(p[g], n, p[g], Exp<V>);
      float block_sum = 0.0f;
      for (j = 0; j < n; ++j) block_sum += p[g][j];
      sum[g] = sum[g] * alpha[g] + block_sum;
      max_score[g] = new_max;
    }

    // The values in runs of 8 vectors (accumulator registers), then 4 chunks of 16, then 1.
    constexpr int kWide = 8 / V::kPer16;
    for (j = 0; j < n; ++j) rows[j] = kv.VRow(block + j, kv_head);
    int i = 0;
    if constexpr (kWide > 4) {
      for (; i + 16 * kWide <= hd; i += 16 * kWide) {
        for (int g = 0; g < n_heads; ++g) {
          AccumulateV<V, L, kWide>(acc[g] + i, i, rows, p[g], n, V::Set1(alpha[g]));
        }
      }
    }
    for (; i + 64 <= hd; i += 64) {
      for (int g = 0; g < n_heads; ++g) {
        AccumulateV<V, L, 4>(acc[g] + i, i, rows, p[g], n, V::Set1(alpha[g]));
      }
    }
    for (; i + 16 <= hd; i += 16) {
      for (int g = 0; g < n_heads; ++g) {
        AccumulateV<V, L, 1>(acc[g] + i, i, rows, p[g], n, V::Set1(alpha[g]));
      }
    }
  }
  for (int g = 0; g < n_heads; ++g) {
    const auto inv_sum = V::Set1(1.0f / sum[g]);
    for (int i = 0; i < hd; i += V::kLanes) {
      V::Store(out + g * hd + i, V::Mul(V::LoadAligned(acc[g] + i), inv_sum));
    }
  }
}

template <VecTrait V>
void AttendHeads(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys,
                 float scale, float* out) {
  switch (kv.type) {
    case TensorType::kF16:
      return Attend<V, LoadF16<V>>(q, n_heads, kv, kv_head, keys, scale, out);
    case TensorType::kBF16:
      return Attend<V, LoadBF16<V>>(q, n_heads, kv, kv_head, keys, scale, out);
    case TensorType::kQ8_0:
      return Attend<V, LoadQ8_0<V>>(q, n_heads, kv, kv_head, keys, scale, out);
    case TensorType::kQ4_0:
      return Attend<V, LoadQ4_0<V>>(q, n_heads, kv, kv_head, keys, scale, out);
    default:
      return Attend<V, LoadF32<V>>(q, n_heads, kv, kv_head, keys, scale, out);
  }
}

}  // namespace tandem::kernels::simd

// Inside an ISA namespace: defines that ISA's AttendHeads (attention_isa.h).
#define TANDEM_SIMD_DEFINE_ATTENTION(V)                                                       \
  void AttendHeads(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys, \
                   float scale, float* out) {                                                 \
    simd::AttendHeads<V>(q, n_heads, kv, kv_head, keys, scale, out);                          \
  }
