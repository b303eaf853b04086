// The driver of the quantized row-major tiles over a lane trait Q (tile_lanes.h), for the ISA
// translation units only: it decodes weight blocks once and reuses them for every activation row.
//
// A block kind K (dot_legacy-inl.h, dot_kquant-inl.h) provides kBlockValues, kChunkBlocks,
// Decoded, Decode(rows, block, Decoded*) and Accumulate<NT>(decoded, acts, block, t0,
// acc[NT][kGroups]). Each lane computes exactly the scalar reference's sequence (dot_ref.h):
// exact integer block sums, then the same f32 multiplies and fused multiply-adds in block order,
// the same for every T, so results are bitwise equal to the scalar path on every width.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/prefetch-inl.h"
#include "kernels/simd/tile_lanes.h"

namespace tandem::kernels::simd {

// The magnitudes of a decoded block's kSlots signed weight vectors per group, where the trait
// keeps them (Q::kSignedAsMagnitude): a base of the block kinds' Decoded, empty otherwise.
template <TileLanesTrait Q, int kSlots, bool kMagnitudes>
struct Magnitudes {};
template <TileLanesTrait Q, int kSlots>
struct Magnitudes<Q, kSlots, true> {
  typename Q::VI w_abs[Q::kGroups][kSlots];
};

// Group g of a block of signed weights, decoded: their magnitudes, where the trait keeps them.
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline void KeepMagnitudes(int g, D* out) {
  if constexpr (Q::kSignedAsMagnitude) {
    for (size_t k = 0; k < std::size(out->w[g]); ++k) out->w_abs[g][k] = Q::Abs8(out->w[g][k]);
  }
}

// acc + the exact products of slots `slot` and `slot + 1` of group g of a decoded block (D's
// w, and w_abs for signed weights on a magnitude trait) with the activation words a0 and a1.
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline typename Q::VI DotSlots(typename Q::VI acc, const D& dec, int g,
                                                      int slot, typename Q::VI a0,
                                                      typename Q::VI a1) {
  if constexpr (D::kSignedWeights && Q::kSignedAsMagnitude) {
    acc = Q::DotSigned(acc, dec.w_abs[g][slot], dec.w[g][slot], a0);
    return Q::DotSigned(acc, dec.w_abs[g][slot + 1], dec.w[g][slot + 1], a1);
  } else {
    return Q::DotPair(acc, dec.w[g][slot], a0, dec.w[g][slot + 1], a1);
  }
}

// Q4_K/Q5_K's 8 6-bit scales and mins per lane from the 12 scale bytes loaded as 3 dwords
// (h1 = bytes 0..3, h2 = 4..7, h3 = 8..11), as the reference's UnpackScaleMinK4.
template <TileLanesTrait Q>
[[gnu::always_inline]] inline void UnpackScaleMinK4(typename Q::VI h1, typename Q::VI h2,
                                                    typename Q::VI h3, typename Q::VI sc[8],
                                                    typename Q::VI m[8]) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = Q::Bits(h1, 8 * j, 63);
    m[j] = Q::Bits(h2, 8 * j, 63);
    sc[j + 4] = Q::Or(Q::Bits(h3, 8 * j, 0xF), Q::ShiftLeft(Q::Bits(h1, 8 * j + 6, 3), 4));
    m[j + 4] = Q::Or(Q::Bits(h3, 8 * j + 4, 0xF), Q::ShiftLeft(Q::Bits(h2, 8 * j + 6, 3), 4));
  }
}

// Calls fn.template operator()<N>() for the compile-time N equal to n (1 <= n <= kMax).
template <int kMax, class Fn>
inline void WithRowCount(int64_t n, Fn&& fn) {
  if constexpr (kMax > 0) {
    if (n == kMax) return fn.template operator()<kMax>();
    WithRowCount<kMax - 1>(n, fn);
  }
}

// Lanes of group g that hold one of the tile's n_rows rows.
template <TileLanesTrait Q>
inline typename Q::F::M GroupMask(int n_rows, int g) {
  return Q::F::FirstN(std::clamp(n_rows - Q::kLanes * g, 0, Q::kLanes));
}

template <TileLanesTrait Q, int NT>
inline void StoreRows(const typename Q::F::V (&acc)[NT][Q::kGroups], int n_rows, float* y,
                      int64_t ldy) {
  for (int g = 0; g < Q::kGroups; ++g) {
    if (n_rows <= Q::kLanes * g) break;
    const auto mask = GroupMask<Q>(n_rows, g);
    for (int t = 0; t < NT; ++t) Q::F::MaskStore(mask, y + t * ldy + Q::kLanes * g, acc[t][g]);
  }
}

// Runs K::Accumulate<NT> over decoded blocks [0, n) for activation rows t0..t0+NT-1, carrying
// the per-row accumulators through y (masked to the tile's valid rows).
template <TileLanesTrait Q, class K, int NT>
void AccumulateChunk(const typename K::Decoded* dec, int n, const QuantizedActivations& acts,
                     int64_t b0, int64_t t0, bool first, int n_rows, float* y, int64_t ldy) {
  typename Q::F::V acc[NT][Q::kGroups];
  for (int g = 0; g < Q::kGroups; ++g) {
    const auto mask = GroupMask<Q>(n_rows, g);
    for (int t = 0; t < NT; ++t) {
      acc[t][g] = first ? Q::F::Zero() : Q::F::MaskLoad(mask, y + (t0 + t) * ldy + Q::kLanes * g);
    }
  }
  for (int i = 0; i < n; ++i) K::template Accumulate<NT>(dec[i], acts, b0 + i, t0, acc);
  StoreRows<Q, NT>(acc, n_rows, y + t0 * ldy, ldy);
}

// Small batches (T <= Q::kFusedRows): decode each block and use it at once.
template <TileLanesTrait Q, class K, int NT>
void RunQuantTileFused(const typename Q::Rows& rows, const PrefetchPlan& plan, int64_t nb,
                       const QuantizedActivations& acts, int n_rows, float* y, int64_t ldy) {
  typename Q::F::V acc[NT][Q::kGroups];
  for (int t = 0; t < NT; ++t)
    for (int g = 0; g < Q::kGroups; ++g) acc[t][g] = Q::F::Zero();
  for (int64_t b = 0; b < nb; ++b) {
    PrefetchBlock<typename Q::F>(plan, b);
    typename K::Decoded dec;
    K::Decode(rows, b, &dec);
    K::template Accumulate<NT>(dec, acts, b, 0, acc);
  }
  StoreRows<Q, NT>(acc, n_rows, y, ldy);
}

// The tile driver: for each chunk of K::kChunkBlocks blocks, decode the 16 rows once, then
// accumulate every activation row, Q::kChunkRows at a time. Every path performs the same
// operations per lane in the same order.
template <TileLanesTrait Q, class K>
void RunQuantTile(const WeightTile& tile, const QuantizedActivations& acts, float* y, int64_t ldy) {
  const typename Q::Rows rows(tile);
  const int64_t nb = acts.cols / K::kBlockValues;
  const int64_t n_t = acts.n_rows;
  const PrefetchPlan plan(tile, nb);
  if (n_t <= Q::kFusedRows) {
    WithRowCount<Q::kFusedRows>(n_t, [&]<int NT>() {
      RunQuantTileFused<Q, K, NT>(rows, plan, nb, acts, tile.n_rows, y, ldy);
    });
    return;
  }
  alignas(64) typename K::Decoded dec[K::kChunkBlocks];
  for (int64_t b0 = 0; b0 < nb; b0 += K::kChunkBlocks) {
    const int n = static_cast<int>(std::min<int64_t>(K::kChunkBlocks, nb - b0));
    for (int i = 0; i < n; ++i) {
      PrefetchBlock<typename Q::F>(plan, b0 + i);
      K::Decode(rows, b0 + i, &dec[i]);
    }
    const bool first = b0 == 0;
    int64_t t = 0;
    for (; t + Q::kChunkRows <= n_t; t += Q::kChunkRows) {
      AccumulateChunk<Q, K, Q::kChunkRows>(dec, n, acts, b0, t, first, tile.n_rows, y, ldy);
    }
    WithRowCount<Q::kChunkRows - 1>(n_t - t, [&]<int NT>() {
      AccumulateChunk<Q, K, NT>(dec, n, acts, b0, t, first, tile.n_rows, y, ldy);
    });
  }
  if (nb == 0) {
    typename Q::F::V zero[1][Q::kGroups];
    for (int g = 0; g < Q::kGroups; ++g) zero[0][g] = Q::F::Zero();
    for (int64_t t = 0; t < n_t; ++t) StoreRows<Q, 1>(zero, tile.n_rows, y + t * ldy, ldy);
  }
}

}  // namespace tandem::kernels::simd
