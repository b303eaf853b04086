// AVX-512 building blocks for the quantized matmul kernels, where vector lane r belongs to
// weight row r of the tile: transposed loads of 16 rows, per-row field gathers, and the driver
// that decodes weight blocks once per column chunk and reuses them for every activation row.
//
// Each lane computes exactly the scalar reference's sequence (dot_ref.h): exact integer block
// sums from VNNI (weights as unsigned bytes w + o, activations as signed bytes, minus o * sum(a)),
// then the same f32 multiplies and fused multiply-adds, so results are bitwise equal to the
// scalar path.
// Only AVX-512 translation units include this header.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/avx512/vec_avx512.h"
#include "kernels/matmul_kernel.h"
#include "kernels/simd/prefetch-inl.h"

namespace tandem::kernels::avx512 {

static_assert(kTileRows == 16, "one zmm lane per tile row");

// The tile's 16 row pointers.
struct TileRows {
  explicit TileRows(const WeightTile& tile) {
    for (int r = 0; r < 16; ++r) row[r] = tile.rows[r];
  }
  const uint8_t* row[16];
};

// Lane r = the 4 bytes at row[r] + offset (all 4 must be readable). Scalar loads: faster than
// vpgatherqd on the CPUs measured (bench/README.md).
inline __m512i GatherDword(const TileRows& rows, int64_t offset) {
  alignas(64) int32_t v[16];
  for (int r = 0; r < 16; ++r) std::memcpy(&v[r], rows.row[r] + offset, sizeof v[r]);
  return _mm512_load_si512(v);
}

// Lane r = fp16 value in the low (or, with kHigh, the high) half of `dwords` lane r, as f32.
template <bool kHigh = false>
inline __m512 HalfToFloat(__m512i dwords) {
  if constexpr (kHigh) dwords = _mm512_srli_epi32(dwords, 16);
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dwords));
}

// Transposed load of 16 bytes from each row: out[k] lane r = bytes 4k..4k+3 at row[r] + offset.
inline void LoadTransposed(const TileRows& rows, int64_t offset, __m512i out[4]) {
  auto load = [&](int r) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows.row[r] + offset));
  };
  auto gather4 = [&](int r) {  // rows r, r+4, r+8, r+12 in the four 128-bit lanes
    __m512i v = _mm512_castsi128_si512(load(r));
    v = _mm512_inserti32x4(v, load(r + 4), 1);
    v = _mm512_inserti32x4(v, load(r + 8), 2);
    return _mm512_inserti32x4(v, load(r + 12), 3);
  };
  const __m512i a0 = gather4(0), a1 = gather4(1), a2 = gather4(2), a3 = gather4(3);
  // In 128-bit lane L, a_j holds row 4L+j; a 4x4 dword transpose per lane puts row 4L+j in
  // dword j of lane L, i.e. in zmm lane 4L+j = r.
  const __m512i t0 = _mm512_unpacklo_epi32(a0, a1), t1 = _mm512_unpackhi_epi32(a0, a1);
  const __m512i t2 = _mm512_unpacklo_epi32(a2, a3), t3 = _mm512_unpackhi_epi32(a2, a3);
  out[0] = _mm512_unpacklo_epi64(t0, t2);
  out[1] = _mm512_unpackhi_epi64(t0, t2);
  out[2] = _mm512_unpacklo_epi64(t1, t3);
  out[3] = _mm512_unpackhi_epi64(t1, t3);
}

// The 4 activation bytes at p broadcast to every lane.
inline __m512i BroadcastDword(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// Lane-wise integer dot: acc + sum over each lane's 4 byte pairs of w (unsigned) * a (signed).
inline __m512i Dot(__m512i acc, __m512i w, __m512i a) {
  return _mm512_dpbusd_epi32(acc, w, a);
}

inline __m512i LowNibbles(__m512i v) {
  return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
}
inline __m512i HighNibbles(__m512i v) {
  return _mm512_and_si512(_mm512_srli_epi32(v, 4), _mm512_set1_epi8(0x0F));
}

// Issues block b's share of the tile's prefetch region.
inline void Prefetch(const PrefetchPlan& plan, int64_t b) {
  simd::PrefetchBlock<F32x16>(plan, b);
}

// Activation rows per register block in the drivers below: up to kFusedRows rows are computed
// while each block is decoded; larger batches go kChunkRows rows at a time over decoded chunks.
inline constexpr int kFusedRows = 8;
inline constexpr int kChunkRows = 4;

// Runs K::Accumulate<NT> over decoded blocks [0, n) for activation rows t0..t0+NT-1, carrying
// the per-row accumulators through y (masked to the tile's valid rows).
template <class K, int NT>
void AccumulateChunk(const typename K::Decoded* dec, int n, const QuantizedActivations& acts,
                     int64_t b0, int64_t t0, bool first, __mmask16 mask, float* y, int64_t ldy) {
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) {
    acc[t] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, y + (t0 + t) * ldy);
  }
  for (int i = 0; i < n; ++i) K::template Accumulate<NT>(dec[i], acts, b0 + i, t0, acc);
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * ldy, mask, acc[t]);
}

// Small batches (T <= kFusedRows): decode each block and use it at once.
template <class K, int NT>
void RunQuantTileFused(const TileRows& rows, const PrefetchPlan& plan, int64_t nb,
                       const QuantizedActivations& acts, __mmask16 mask, float* y, int64_t ldy) {
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    Prefetch(plan, b);
    typename K::Decoded dec;
    K::Decode(rows, b, &dec);
    K::template Accumulate<NT>(dec, acts, b, 0, acc);
  }
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * ldy, mask, acc[t]);
}

// Calls fn.template operator()<N>() for the compile-time N equal to n (1 <= n <= kMax).
template <int kMax, class Fn>
inline void WithRowCount(int64_t n, Fn&& fn) {
  if constexpr (kMax > 0) {
    if (n == kMax) return fn.template operator()<kMax>();
    WithRowCount<kMax - 1>(n, fn);
  }
}

// The tile driver: for each chunk of K::kChunkBlocks blocks, decode the 16 rows once, then
// accumulate every activation row. K provides kBlockValues, kChunkBlocks, Decoded,
// Decode(rows, block, Decoded*) and Accumulate<NT>(decoded, acts, block, t0, acc[NT]).
// Every path performs the same operations per lane in the same order.
template <class K>
void RunQuantTile(const WeightTile& tile, const QuantizedActivations& acts, float* y, int64_t ldy) {
  const TileRows rows(tile);
  const int64_t nb = acts.cols / K::kBlockValues;
  const int64_t n_t = acts.n_rows;
  const __mmask16 mask = static_cast<__mmask16>((1u << tile.n_rows) - 1);
  const PrefetchPlan plan(tile, nb);
  if (n_t <= kFusedRows) {
    WithRowCount<kFusedRows>(
        n_t, [&]<int NT>() { RunQuantTileFused<K, NT>(rows, plan, nb, acts, mask, y, ldy); });
    return;
  }
  alignas(64) typename K::Decoded dec[K::kChunkBlocks];
  for (int64_t b0 = 0; b0 < nb; b0 += K::kChunkBlocks) {
    const int n = static_cast<int>(std::min<int64_t>(K::kChunkBlocks, nb - b0));
    for (int i = 0; i < n; ++i) {
      Prefetch(plan, b0 + i);
      K::Decode(rows, b0 + i, &dec[i]);
    }
    const bool first = b0 == 0;
    int64_t t = 0;
    for (; t + kChunkRows <= n_t; t += kChunkRows) {
      AccumulateChunk<K, kChunkRows>(dec, n, acts, b0, t, first, mask, y, ldy);
    }
    WithRowCount<kChunkRows - 1>(n_t - t, [&]<int NT>() {
      AccumulateChunk<K, NT>(dec, n, acts, b0, t, first, mask, y, ldy);
    });
  }
  if (nb == 0) {
    for (int64_t t = 0; t < n_t; ++t) _mm512_mask_storeu_ps(y + t * ldy, mask, _mm512_setzero_ps());
  }
}

}  // namespace tandem::kernels::avx512
