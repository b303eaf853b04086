// The attention inner loop (attention_isa.h) over a vector trait V (vec_trait.h), for the ISA
// translation units only: streaming softmax of a few query heads over the visible keys of their
// KV head, K/V rows decoded 16 values at a time straight from the cache type.
//
// Fixed orders: a score is q·k summed in two accumulators, vector c of the row (values
// [c·kLanes, (c + 1)·kLanes)) going to accumulator c % 2, combined at the end; each output value
// accumulates its keys in ascending position. The query heads sharing a KV head share each
// loaded (decoded) block of K and V, up to four heads at a time (eight with 32 registers), and
// fewer heads take several keys side by side; neither changes any key's or head's order of
// operations.
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

// Loaders: Load gives values [i, i + 16) of a cache row (i a multiple of 16) as V::kPer16 f32
// vectors; Load32 values [i, i + 32) (i a multiple of 32) as 2·V::kPer16, the same values as
// two Loads (a quantized block's scale and bytes read once).
template <typename Self, VecTrait V>
struct LoadPairs {
  static void Load32(const uint8_t* row, int i, typename V::V* out) {
    Self::Load(row, i, out);
    Self::Load(row, i + 16, out + V::kPer16);
  }
};

template <VecTrait V>
struct LoadF32 : LoadPairs<LoadF32<V>, V> {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    const float* f = reinterpret_cast<const float*>(row) + i;
    for (int k = 0; k < V::kPer16; ++k) out[k] = V::Load(f + k * V::kLanes);
  }
};

template <VecTrait V>
struct LoadF16 : LoadPairs<LoadF16<V>, V> {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    for (int k = 0; k < V::kPer16; ++k) out[k] = V::LoadF16(row + 2 * (i + k * V::kLanes));
  }
};

template <VecTrait V>
struct LoadBF16 : LoadPairs<LoadBF16<V>, V> {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    for (int k = 0; k < V::kPer16; ++k) out[k] = V::LoadBF16(row + 2 * (i + k * V::kLanes));
  }
};

// A quantized block's fp16 scale d in every lane.
template <VecTrait V>
inline typename V::V BlockScale(uint16_t d) {
  return V::Set1(V::HalfToFloat(d));
}

// 16 signed 8-bit quants times vd.
template <VecTrait V>
inline void ScaleQuants(__m128i q, typename V::V vd, typename V::V* out) {
  V::I8x16ToF32(q, out);
  for (int k = 0; k < V::kPer16; ++k) out[k] = V::Mul(out[k], vd);
}

template <VecTrait V>
struct LoadQ8_0 {
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row) + i / kQK8_0;
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + i % kQK8_0));
    ScaleQuants<V>(q, BlockScale<V>(b->d), out);
  }
  static void Load32(const uint8_t* row, int i, typename V::V* out) {
    const BlockQ8_0* b = reinterpret_cast<const BlockQ8_0*>(row) + i / kQK8_0;
    const auto vd = BlockScale<V>(b->d);
    ScaleQuants<V>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs)), vd, out);
    ScaleQuants<V>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + 16)), vd,
                   out + V::kPer16);
  }
};

template <VecTrait V>
struct LoadQ4_0 {
  static __m128i Centred(__m128i nibbles) {
    return _mm_sub_epi8(_mm_and_si128(nibbles, _mm_set1_epi8(0x0F)), _mm_set1_epi8(8));
  }
  static void Load(const uint8_t* row, int i, typename V::V* out) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + i / kQK4_0;
    __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
    if (i % kQK4_0 != 0) bytes = _mm_srli_epi16(bytes, 4);  // elements 16..31: high nibbles
    ScaleQuants<V>(Centred(bytes), BlockScale<V>(b->d), out);
  }
  static void Load32(const uint8_t* row, int i, typename V::V* out) {
    const BlockQ4_0* b = reinterpret_cast<const BlockQ4_0*>(row) + i / kQK4_0;
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs));
    const auto vd = BlockScale<V>(b->d);
    ScaleQuants<V>(Centred(bytes), vd, out);
    ScaleQuants<V>(Centred(_mm_srli_epi16(bytes, 4)), vd, out + V::kPer16);
  }
};

// Rows to bring into L2 while the scores are computed (the block's V rows, which the value pass
// reads a cache line of every row at a time, a pattern the hardware prefetchers do not follow
// from memory): Issue(j) prefetches row j whole. rows == nullptr: none.
struct RowPrefetch {
  const uint8_t* const* rows = nullptr;
  size_t bytes = 0;
  void Issue(int j) const {
    if (rows == nullptr) return;
    for (size_t off = 0; off < bytes; off += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(rows[j] + off), _MM_HINT_T1);
    }
  }
};

// sums[g][j0 + j] = the vector whose lanes add up to q_g·K[rows[j]] for G query heads (q_g =
// q + g·hd) and N keys side by side: each loaded block of K serves the G heads.
template <VecTrait V, typename L, int G, int N>
inline void Scores(const float* q, const uint8_t* const* rows, int hd,
                   typename V::V (*sums)[V::kLanes], int j0) {
  constexpr int kL = V::kLanes;
  typename V::V acc0[G][N], acc1[G][N];
  for (int g = 0; g < G; ++g) {
    for (int j = 0; j < N; ++j) acc0[g][j] = acc1[g][j] = V::Zero();
  }
  int i = 0;
  for (; i + 2 * kL <= hd; i += 2 * kL) {  // one vector into each accumulator
    for (int j = 0; j < N; ++j) {
      typename V::V k[2];
      if constexpr (V::kPer16 == 1) {
        L::Load32(rows[j], i, k);  // i is a multiple of 32
      } else {
        L::Load(rows[j], i, k);
      }
      for (int g = 0; g < G; ++g) {
        acc0[g][j] = V::MulAdd(V::Load(q + g * hd + i), k[0], acc0[g][j]);
        acc1[g][j] = V::MulAdd(V::Load(q + g * hd + i + kL), k[1], acc1[g][j]);
      }
    }
  }
  if constexpr (V::kPer16 == 1) {
    if (i < hd) {  // one last chunk of 16: an even vector
      for (int j = 0; j < N; ++j) {
        typename V::V k[1];
        L::Load(rows[j], i, k);
        for (int g = 0; g < G; ++g)
          acc0[g][j] = V::MulAdd(V::Load(q + g * hd + i), k[0], acc0[g][j]);
      }
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int j = 0; j < N; ++j) sums[g][j0 + j] = V::Add(acc0[g][j], acc1[g][j]);
  }
}

// p[g][j] = scale · q_g·K[rows[j]] for G heads and n keys, N keys at a time (G·N accumulator
// pairs in registers), each kLanes keys' sums reduced together (V::SumEach: the bits of a
// ReduceSum each). p has room for whole vectors: lanes past n hold zeros.
template <VecTrait V, typename L, int G, int N>
inline void ScoreKeys(const float* q, const uint8_t* const* rows, int n, int hd, float scale,
                      float (*p)[kAttentionKeyBlock], const RowPrefetch& ahead) {
  static_assert(kAttentionKeyBlock % V::kLanes == 0);
  alignas(sizeof(typename V::V)) typename V::V sums[G][V::kLanes];
  const auto vscale = V::Set1(scale);
  for (int c = 0; c < n; c += V::kLanes) {
    const int m = std::min(V::kLanes, n - c);
    int j = 0;
    for (; j + N <= m; j += N) {
      for (int u = 0; u < N; ++u) ahead.Issue(c + j + u);
      Scores<V, L, G, N>(q, rows + c + j, hd, sums, j);
    }
    for (int u = j; u < m; ++u) ahead.Issue(c + u);
    for (; j < m; ++j) Scores<V, L, G, 1>(q, rows + c + j, hd, sums, j);
    for (int g = 0; g < G; ++g) {
      for (j = m; j < V::kLanes; ++j) sums[g][j] = V::Zero();
      V::Store(p[g] + c, V::Mul(V::SumEach(sums[g]), vscale));
    }
  }
}

// acc[g][i, i + 16·NU) = acc[g] · alpha[g] + Σ_j p[g][j] · V_j[i, i + 16·NU) for G heads, keys j
// ascending: each loaded block of V serves the G heads. NU·kPer16 independent accumulator
// chains per head hide the FMA latency; each value's own sum order is unchanged.
template <VecTrait V, typename L, int G, int NU>
inline void AccumulateV(float (*acc)[kMaxHeadDim], int i, const uint8_t* const* rows,
                        const float (*p)[kAttentionKeyBlock], int n, const float* alpha) {
  constexpr int kNV = NU * V::kPer16;
  typename V::V a[G][kNV];
  for (int g = 0; g < G; ++g) {
    const auto al = V::Set1(alpha[g]);
    for (int v = 0; v < kNV; ++v) a[g][v] = V::Mul(V::LoadAligned(acc[g] + i + V::kLanes * v), al);
  }
  for (int j = 0; j < n; ++j) {
    typename V::V vals[kNV];
    int u = 0;
    if (i % 32 == 0) {  // whole quantized blocks read once
      for (; u + 2 <= NU; u += 2) L::Load32(rows[j], i + 16 * u, vals + u * V::kPer16);
    }
    for (; u < NU; ++u) L::Load(rows[j], i + 16 * u, vals + u * V::kPer16);
    for (int g = 0; g < G; ++g) {
      const auto pj = V::Set1(p[g][j]);
      for (int v = 0; v < kNV; ++v) a[g][v] = V::MulAdd(pj, vals[v], a[g][v]);
    }
  }
  for (int g = 0; g < G; ++g) {
    for (int v = 0; v < kNV; ++v) V::StoreAligned(acc[g] + i + V::kLanes * v, a[g][v]);
  }
}

// The values of one key block for G heads: runs of 8 accumulator vectors (16 with 32
// registers), then chunks of 16.
template <VecTrait V, typename L, int G>
inline void AccumulateValues(float (*acc)[kMaxHeadDim], int hd, const uint8_t* const* rows,
                             const float (*p)[kAttentionKeyBlock], int n, const float* alpha) {
  constexpr int kNU = std::max(1, (V::kRegisters >= 32 ? 16 : 8) / (G * V::kPer16));
  int i = 0;
  if constexpr (kNU > 1) {
    for (; i + 16 * kNU <= hd; i += 16 * kNU) AccumulateV<V, L, G, kNU>(acc, i, rows, p, n, alpha);
  }
  for (; i + 16 <= hd; i += 16) AccumulateV<V, L, G, 1>(acc, i, rows, p, n, alpha);
}

// rows[j] = the row of position first + j of kv head `head` in `base` (K or V), j < n.
inline void KeyRows(const KvView& kv, const void* base, int32_t first, int n, int head,
                    const uint8_t** rows) {
  const uint8_t* b = static_cast<const uint8_t*>(base) + head * kv.head_stride_bytes;
  if (kv.remap != nullptr && first + n > kv.remap_begin) {  // a draft tree's path
    for (int j = 0; j < n; ++j)
      rows[j] = b + kv.Slot(kv.StoredAt(first + j)) * kv.slot_stride_bytes;
    return;
  }
  int64_t slot = kv.Slot(first);  // one division per block, then the ring's wrap
  for (int j = 0; j < n; ++j) {
    rows[j] = b + slot * kv.slot_stride_bytes;
    if (++slot == kv.n_slots) slot = 0;
  }
}

template <VecTrait V, typename L>
void Attend(const float* q_in, int n_heads, const KvView& kv, int kv_head, KeyRange keys,
            float scale, float* out, const AttendSplitState* split) {
  const int hd = kv.head_dim;
  // Per head g: acc[g] = Σ p_j · v_j of the keys so far and sum[g] = Σ p_j, both relative to
  // max_score[g]; p[g] = the current block's weights.
  alignas(sizeof(typename V::V)) float acc[kAttendMaxHeads][kMaxHeadDim];
  alignas(64) float p[kAttendMaxHeads][kAttentionKeyBlock];
  float max_score[kAttendMaxHeads], sum[kAttendMaxHeads], alpha[kAttendMaxHeads];
  const uint8_t* rows[kAttentionKeyBlock];
  const uint8_t* vrows[kAttentionKeyBlock];
  const size_t row_bytes = KvRowBytes(kv.type, hd);
  // The queries copied to a cache-line-aligned buffer: every score step reads a query vector,
  // and one that straddles two cache lines costs two loads (the callers' rows are wherever
  // their allocator put them).
  alignas(64) float qa[kAttendMaxHeads * kMaxHeadDim];
  std::copy(q_in, q_in + n_heads * hd, qa);
  const float* q = qa;
  for (int g = 0; g < n_heads; ++g) {
    std::fill(acc[g], acc[g] + hd, 0.0f);
    max_score[g] = -INFINITY;
    sum[g] = 0.0f;
  }

  for (int32_t block = keys.begin; block < keys.end; block += kAttentionKeyBlock) {
    const int n = std::min<int32_t>(kAttentionKeyBlock, keys.end - block);
    KeyRows(kv, kv.k, block, n, kv_head, rows);
    KeyRows(kv, kv.v, block, n, kv_head, vrows);
    const RowPrefetch v_ahead{vrows, row_bytes}, none;
    // With 32 registers, eight heads at once (each decoded K block serves all eight), then
    // fours with two keys side by side (each q load serves two keys); the last one to three
    // heads with more keys side by side.
    constexpr bool kWide = V::kRegisters >= 32;
    int g = 0;
    if constexpr (kWide) {
      for (; g + 8 <= n_heads; g += 8) {
        ScoreKeys<V, L, 8, 1>(q + g * hd, rows, n, hd, scale, p + g, g == 0 ? v_ahead : none);
      }
    }
    for (; g + 4 <= n_heads; g += 4) {
      ScoreKeys<V, L, 4, kWide ? 2 : 1>(q + g * hd, rows, n, hd, scale, p + g,
                                        g == 0 ? v_ahead : none);
    }
    switch (n_heads - g) {
      case 3:
        ScoreKeys<V, L, 3, 1>(q + g * hd, rows, n, hd, scale, p + g, g == 0 ? v_ahead : none);
        break;
      case 2:
        ScoreKeys<V, L, 2, 2>(q + g * hd, rows, n, hd, scale, p + g, g == 0 ? v_ahead : none);
        break;
      case 1:
        ScoreKeys<V, L, 1, 4>(q + g * hd, rows, n, hd, scale, p + g, g == 0 ? v_ahead : none);
        break;
      default:
        break;
    }
    for (g = 0; g < n_heads; ++g) {
      // The maximum of the scores that are not NaN (V::Max keeps its second operand when the
      // first is NaN; the max is exact, so any order gives it; of +0 and -0 either may win,
      // which changes no later result), lanes past n padded with -inf.
      const auto neg_inf = V::Set1(-INFINITY);
      auto vmax = neg_inf;
      for (int j = 0; j < n; j += V::kLanes) {
        const int m = std::min(V::kLanes, n - j);
        vmax = V::Max(V::MaskLoadOr(neg_inf, V::FirstN(m), p[g] + j), vmax);
      }
      const float block_max = V::ReduceMax(vmax);
      const float new_max = block_max > max_score[g] ? block_max : max_score[g];
      alpha[g] = block == keys.begin ? 0.0f : std::exp(max_score[g] - new_max);
      for (int j = 0; j < n; ++j) p[g][j] -= new_max;
      Map<V>(p[g], n, p[g], Exp<V>);
      max_score[g] = new_max;
    }
    // Each head's weights summed in key order, the heads' chains side by side (a chain of
    // dependent adds per head would wait on the add latency).
    float block_sum[kAttendMaxHeads] = {};
    for (int j = 0; j < n; ++j) {
      for (g = 0; g < n_heads; ++g) block_sum[g] += p[g][j];
    }
    for (g = 0; g < n_heads; ++g) sum[g] = sum[g] * alpha[g] + block_sum[g];

    g = 0;
    if constexpr (kWide) {
      for (; g + 8 <= n_heads; g += 8) {
        AccumulateValues<V, L, 8>(acc + g, hd, vrows, p + g, n, alpha + g);
      }
    }
    for (; g + 4 <= n_heads; g += 4) {
      AccumulateValues<V, L, 4>(acc + g, hd, vrows, p + g, n, alpha + g);
    }
    switch (n_heads - g) {
      case 3:
        AccumulateValues<V, L, 3>(acc + g, hd, vrows, p + g, n, alpha + g);
        break;
      case 2:
        AccumulateValues<V, L, 2>(acc + g, hd, vrows, p + g, n, alpha + g);
        break;
      case 1:
        AccumulateValues<V, L, 1>(acc + g, hd, vrows, p + g, n, alpha + g);
        break;
      default:
        break;
    }
  }
  if (split != nullptr) {  // a split's state
    for (int g = 0; g < n_heads; ++g) {
      for (int i = 0; i < hd; i += V::kLanes) {
        V::Store(out + g * hd + i, V::LoadAligned(acc[g] + i));
      }
      split->max_score[g] = max_score[g];
      split->sum[g] = sum[g];
    }
    return;
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
                 float scale, float* out, const AttendSplitState* split) {
  switch (kv.type) {
    case TensorType::kF16:
      return Attend<V, LoadF16<V>>(q, n_heads, kv, kv_head, keys, scale, out, split);
    case TensorType::kBF16:
      return Attend<V, LoadBF16<V>>(q, n_heads, kv, kv_head, keys, scale, out, split);
    case TensorType::kQ8_0:
      return Attend<V, LoadQ8_0<V>>(q, n_heads, kv, kv_head, keys, scale, out, split);
    case TensorType::kQ4_0:
      return Attend<V, LoadQ4_0<V>>(q, n_heads, kv, kv_head, keys, scale, out, split);
    default:
      return Attend<V, LoadF32<V>>(q, n_heads, kv, kv_head, keys, scale, out, split);
  }
}

}  // namespace tandem::kernels::simd

// Inside an ISA namespace: defines that ISA's AttendHeads (attention_isa.h).
#define TANDEM_SIMD_DEFINE_ATTENTION(V)                                                       \
  void AttendHeads(const float* q, int n_heads, const KvView& kv, int kv_head, KeyRange keys, \
                   float scale, float* out, const AttendSplitState* split) {                  \
    simd::AttendHeads<V>(q, n_heads, kv, kv_head, keys, scale, out, split);                   \
  }
