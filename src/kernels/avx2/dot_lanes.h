// AVX2 building blocks for the quantized matmul kernels, where lane r of group g belongs to
// weight row 8g + r of the tile: transposed loads of 8 rows, per-row field gathers, integer dots
// without VNNI, and the driver that decodes weight blocks once and reuses them for every
// activation row.
//
// Each lane computes exactly the scalar reference's sequence (dot_ref.h): exact integer block
// sums, then the same f32 multiplies and fused multiply-adds, so results are bitwise equal to the
// scalar path.
// Only AVX2 translation units include this header.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/avx2/vec_avx2.h"
#include "kernels/matmul_kernel.h"
#include "kernels/simd/prefetch-inl.h"

namespace tandem::kernels::avx2 {

inline constexpr int kGroups = kTileRows / 8;  // ymm groups of 8 rows per tile

struct TileRows {
  explicit TileRows(const WeightTile& tile) {
    for (int r = 0; r < kTileRows; ++r) row[r] = tile.rows[r];
  }
  const uint8_t* row[kTileRows];
};

// Lane r = the 4 bytes at row[8g + r] + offset.
inline __m256i GatherDword(const TileRows& rows, int g, int64_t offset) {
  alignas(32) int32_t v[8];
  for (int r = 0; r < 8; ++r) std::memcpy(&v[r], rows.row[8 * g + r] + offset, sizeof v[r]);
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(v));
}

// Lane r = fp16 value in the low (or, with kHigh, the high) half of `dwords` lane r, as f32.
template <bool kHigh = false>
inline __m256 HalfToFloat(__m256i dwords) {
  if constexpr (kHigh) {
    dwords = _mm256_srli_epi32(dwords, 16);
  } else {
    dwords = _mm256_and_si256(dwords, _mm256_set1_epi32(0xFFFF));
  }
  // Pack the 8 low halves into 128 bits: packus keeps 0..65535 exactly.
  const __m256i packed = _mm256_packus_epi32(dwords, dwords);  // per 128-bit lane
  const __m128i halves = _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
  return _mm256_cvtph_ps(halves);
}

// Transposed load of 16 bytes from each row of group g: out[k] lane r = bytes 4k..4k+3 at
// row[8g + r] + offset.
inline void LoadTransposed(const TileRows& rows, int g, int64_t offset, __m256i out[4]) {
  auto load = [&](int r) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows.row[8 * g + r] + offset));
  };
  auto pair = [&](int r) {  // rows r and r+4 in the two 128-bit lanes
    return _mm256_inserti128_si256(_mm256_castsi128_si256(load(r)), load(r + 4), 1);
  };
  const __m256i a0 = pair(0), a1 = pair(1), a2 = pair(2), a3 = pair(3);
  const __m256i t0 = _mm256_unpacklo_epi32(a0, a1), t1 = _mm256_unpackhi_epi32(a0, a1);
  const __m256i t2 = _mm256_unpacklo_epi32(a2, a3), t3 = _mm256_unpackhi_epi32(a2, a3);
  out[0] = _mm256_unpacklo_epi64(t0, t2);
  out[1] = _mm256_unpackhi_epi64(t0, t2);
  out[2] = _mm256_unpacklo_epi64(t1, t3);
  out[3] = _mm256_unpackhi_epi64(t1, t3);
}

// Per lane: (v >> shift) & mask.
inline __m256i Bits(__m256i v, int shift, int mask) {
  return _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(mask));
}

// Q4_K/Q5_K's 8 6-bit scales and mins per lane from the 12 scale bytes loaded as 3 dwords
// (h1 = bytes 0..3, h2 = 4..7, h3 = 8..11), as the reference's UnpackScaleMinK4.
inline void UnpackScaleMinK4(__m256i h1, __m256i h2, __m256i h3, __m256i sc[8], __m256i m[8]) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = Bits(h1, 8 * j, 63);
    m[j] = Bits(h2, 8 * j, 63);
    sc[j + 4] = _mm256_or_si256(Bits(h3, 8 * j, 0xF), _mm256_slli_epi32(Bits(h1, 8 * j + 6, 3), 4));
    m[j + 4] =
        _mm256_or_si256(Bits(h3, 8 * j + 4, 0xF), _mm256_slli_epi32(Bits(h2, 8 * j + 6, 3), 4));
  }
}

inline __m256i BroadcastDword(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

inline __m256i LowNibbles(__m256i v) {
  return _mm256_and_si256(v, _mm256_set1_epi8(0x0F));
}
inline __m256i HighNibbles(__m256i v) {
  return _mm256_and_si256(_mm256_srli_epi32(v, 4), _mm256_set1_epi8(0x0F));
}

// acc + per-lane sum of the 4 byte products of w0 * a0 and of w1 * a1, exactly, for unsigned
// weights w <= 63 and activations |a| <= 127: two 16-bit pair sums are added before widening,
// and 2 * 2 * 63 * 127 < 2^15.
inline __m256i DotPair(__m256i acc, __m256i w0, __m256i a0, __m256i w1, __m256i a1) {
  const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(w0, a0), _mm256_maddubs_epi16(w1, a1));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

// acc + per-lane sum of w * a for signed weights (any int8 but -128 paired with a = -128) via
// |w| * sign(a, w).
inline __m256i DotSigned(__m256i acc, __m256i w_abs, __m256i w, __m256i a) {
  const __m256i p = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(a, w));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

inline constexpr int kActRowsPerBlock = 2;

// Issues block b's share of the tile's prefetch region.
inline void Prefetch(const PrefetchPlan& plan, int64_t b) {
  simd::PrefetchBlock<F32x8>(plan, b);
}

// Lanes of group g that hold valid rows, as a maskload/maskstore mask.
inline __m256i GroupMask(int n_rows, int g) {
  const int valid = std::clamp(n_rows - 8 * g, 0, 8);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(valid), lane);
}

template <int NT>
inline void StoreRows(const __m256 acc[NT][kGroups], int n_rows, float* y, int64_t ldy) {
  for (int g = 0; g < kGroups; ++g) {
    if (n_rows <= 8 * g) break;
    const __m256i mask = GroupMask(n_rows, g);
    for (int t = 0; t < NT; ++t) _mm256_maskstore_ps(y + t * ldy + 8 * g, mask, acc[t][g]);
  }
}

template <int NT>
inline void LoadRows(__m256 acc[NT][kGroups], int n_rows, const float* y, int64_t ldy) {
  for (int g = 0; g < kGroups; ++g) {
    const __m256i mask = GroupMask(n_rows, g);
    for (int t = 0; t < NT; ++t) acc[t][g] = _mm256_maskload_ps(y + t * ldy + 8 * g, mask);
  }
}

// Runs K::Accumulate<NT> over decoded blocks [0, n) for activation rows t0..t0+NT-1, carrying
// the per-row accumulators through y (masked to the tile's valid rows).
template <class K, int NT>
void AccumulateChunk(const typename K::Decoded* dec, int n, const QuantizedActivations& acts,
                     int64_t b0, int64_t t0, bool first, int n_rows, float* y, int64_t ldy) {
  __m256 acc[NT][kGroups];
  if (first) {
    for (int t = 0; t < NT; ++t)
      for (int g = 0; g < kGroups; ++g) acc[t][g] = _mm256_setzero_ps();
  } else {
    LoadRows<NT>(acc, n_rows, y + t0 * ldy, ldy);
  }
  for (int i = 0; i < n; ++i) K::template Accumulate<NT>(dec[i], acts, b0 + i, t0, acc);
  StoreRows<NT>(acc, n_rows, y + t0 * ldy, ldy);
}

// Small batches (T <= kActRowsPerBlock): decode each block and use it at once.
template <class K, int NT>
void RunQuantTileFused(const TileRows& rows, const PrefetchPlan& plan, int64_t nb,
                       const QuantizedActivations& acts, int n_rows, float* y, int64_t ldy) {
  __m256 acc[NT][kGroups];
  for (int t = 0; t < NT; ++t)
    for (int g = 0; g < kGroups; ++g) acc[t][g] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    Prefetch(plan, b);
    alignas(32) typename K::Decoded dec;
    K::Decode(rows, b, &dec);
    K::template Accumulate<NT>(dec, acts, b, 0, acc);
  }
  StoreRows<NT>(acc, n_rows, y, ldy);
}

// The tile driver, as avx512::RunQuantTile: decode K::kChunkBlocks blocks of the 16 rows once,
// then accumulate every activation row; the same operations per lane for every T.
template <class K>
void RunQuantTile(const WeightTile& tile, const QuantizedActivations& acts, float* y, int64_t ldy) {
  const TileRows rows(tile);
  const int64_t nb = acts.cols / K::kBlockValues;
  const int64_t n_t = acts.n_rows;
  const PrefetchPlan plan(tile, nb);
  if (n_t == 1) return RunQuantTileFused<K, 1>(rows, plan, nb, acts, tile.n_rows, y, ldy);
  if (n_t == 2) return RunQuantTileFused<K, 2>(rows, plan, nb, acts, tile.n_rows, y, ldy);
  alignas(32) typename K::Decoded dec[K::kChunkBlocks];
  for (int64_t b0 = 0; b0 < nb; b0 += K::kChunkBlocks) {
    const int n = static_cast<int>(std::min<int64_t>(K::kChunkBlocks, nb - b0));
    for (int i = 0; i < n; ++i) {
      Prefetch(plan, b0 + i);
      K::Decode(rows, b0 + i, &dec[i]);
    }
    const bool first = b0 == 0;
    int64_t t = 0;
    for (; t + kActRowsPerBlock <= n_t; t += kActRowsPerBlock) {
      AccumulateChunk<K, kActRowsPerBlock>(dec, n, acts, b0, t, first, tile.n_rows, y, ldy);
    }
    if (t < n_t) AccumulateChunk<K, 1>(dec, n, acts, b0, t, first, tile.n_rows, y, ldy);
  }
  if (nb == 0) {
    const __m256 zero[1][kGroups] = {{_mm256_setzero_ps(), _mm256_setzero_ps()}};
    for (int64_t t = 0; t < n_t; ++t) StoreRows<1>(zero, tile.n_rows, y + t * ldy, ldy);
  }
}

}  // namespace tandem::kernels::avx2
