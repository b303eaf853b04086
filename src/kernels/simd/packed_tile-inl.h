// The drivers of the packed (interleaved, packed_layout.h) tiles, written once over the lane trait
// Q (tile_lanes.h) of the ISA translation unit that includes them: a group is Q::kLanes rows,
// vector lane r = row r of the group, and one vector load gives every row's next dword.
//
// The block kernel K of each type (packed_blocks-inl.h: how a block's quants are unpacked and
// multiplied) gives
//   kActRows, kBlockValues, kBlockBytes (in the 8-row layout's units, packed_layout.h);
//   PrefetchAhead(nt): how far ahead (8-row units) a pass of nt activation rows prefetches;
//   Block<NT>(group, offset, rows, b, acc): block b of one group against NT activation rows;
//   kPairRows (0: none), and where it is not 0, kPairAhead and PairBlock<NT>(g0, g1, offset,
//     rows, b, acc): two groups at once, each broadcast activation feeding both (HasPairBlock);
//   kDecodeOnce, and where it is set, Decoded, Decode(group, offset, out), Accumulate<NT>(dec,
//     rows, b, acc), kDecodeChunkBlocks, kDecodeRows: larger batches decode each block once into
//     L1 and every activation row reads it there (HasDecodeOnce).
// Every path gives each output the block kernel's per-element sequence, so the drivers choose
// among them by speed alone.
#pragma once

#include <xmmintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/quant_tile-inl.h"
#include "kernels/simd/tile_lanes.h"

namespace tandem::kernels::simd::packed {

// One group of Q::kLanes rows. Offsets are those of the 8-row layout the block kernels are
// written in (packed_layout.h); a 16-row group has each at twice the offset.
template <TileLanesTrait Q>
struct Group {
  static constexpr int64_t kScale = Q::kLanes / 8;
  const uint8_t* p;
  // Dword chunk at `offset`: lane r = row r's dword.
  [[gnu::always_inline]] typename Q::VI Load(int64_t offset) const {
    return Q::LoadDwords(p + kScale * offset);
  }
  // The fp16 values at `offset` (one per row), widened.
  [[gnu::always_inline]] typename Q::F::V Halves(int64_t offset) const {
    return Q::F::LoadF16(p + kScale * offset);
  }
  // `bytes` of the 8-row layout at `offset` (the next group's, at or past this one's end: it
  // follows in memory), up to `end`.
  void Prefetch(int64_t offset, int64_t bytes, const uint8_t* end) const {
    const int64_t stop = std::min<int64_t>(kScale * (offset + bytes), end - p);
    for (int64_t l = kScale * offset; l < stop; l += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(p + l), _MM_HINT_T0);
    }
  }
};

template <class K>
concept HasPairBlock = (K::kPairRows > 0);
template <class K>
concept HasDecodeOnce = (K::kDecodeOnce);

template <TileLanesTrait Q>
inline Group<Q> GroupAt(const PackedTile& tile, int g) {
  return {tile.groups + g * tile.group_bytes};
}

// Output rows of group g: all Q::kLanes lanes, or the tile's last rows.
template <TileLanesTrait Q>
inline int GroupRowCount(const PackedTile& tile, int g) {
  return std::min(tile.n_rows - Q::kLanes * g, Q::kLanes);
}

// acc[t] to y + t * ldy, its first n lanes.
template <TileLanesTrait Q, int NT>
inline void StoreLanes(const typename Q::F::V (&acc)[NT], int n, float* y, int64_t ldy) {
  using F = typename Q::F;
  if (n == Q::kLanes) {
    for (int t = 0; t < NT; ++t) F::Store(y + t * ldy, acc[t]);
  } else {
    const typename F::M mask = F::FirstN(n);
    for (int t = 0; t < NT; ++t) F::MaskStore(mask, y + t * ldy, acc[t]);
  }
}

// The rows of one group against the activation rows of `rows`, each block decoded and used at
// once, stored to y (the group's column 0), its first n_out lanes.
template <TileLanesTrait Q, class K, int NT>
void GroupRows(const Group<Q>& g, int64_t nb, const uint8_t* end, const ActRows<NT>& rows,
               int n_out, float* y, int64_t ldy) {
  typename Q::F::V acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = Q::F::Zero();
  constexpr int64_t kAhead = K::PrefetchAhead(NT);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * K::kBlockBytes;
    g.Prefetch(off + kAhead, K::kBlockBytes, end);
    K::template Block<NT>(g, off, rows, b, acc);
  }
  StoreLanes<Q, NT>(acc, n_out, y, ldy);
}

// Two groups' rows against the activation rows of `rows` (K::PairBlock), stored as GroupRows.
// kToNextPair: the two groups after these are read next (a tile of two groups read in one pass:
// decode, verification), so each stream's prefetches run on past its group's end into its own
// next group (the group after the partner), not into the other stream. (Not for a prefill tile,
// re-read from L2 by every pass of activation rows: bench/README.md § Kernel choices.)
template <TileLanesTrait Q, class K, int NT, bool kToNextPair>
void GroupPairRows(const Group<Q>& g0, const Group<Q>& g1, int64_t nb, const uint8_t* end,
                   const ActRows<NT>& rows, int n_out1, float* y, int64_t ldy) {
  typename Q::F::V acc[2][NT];
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = Q::F::Zero();
  const int64_t group_bytes = g1.p - g0.p;
  const Group<Q> next0{g1.p + group_bytes}, next1{g1.p + 2 * group_bytes};
  constexpr int64_t kScale = Group<Q>::kScale;
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * K::kBlockBytes, ahead = off + K::kPairAhead;
    if (kToNextPair && kScale * ahead >= group_bytes) {
      next0.Prefetch(ahead - group_bytes / kScale, K::kBlockBytes, end);
      next1.Prefetch(ahead - group_bytes / kScale, K::kBlockBytes, end);
    } else {
      g0.Prefetch(ahead, K::kBlockBytes, end);
      g1.Prefetch(ahead, K::kBlockBytes, end);
    }
    K::template PairBlock<NT>(g0, g1, off, rows, b, acc);
  }
  StoreLanes<Q, NT>(acc[0], Q::kLanes, y, ldy);
  StoreLanes<Q, NT>(acc[1], n_out1, y + Q::kLanes, ldy);
}

// Activation rows t0..t0+NT-1 over every group of the tile (two at a time where K can).
template <TileLanesTrait Q, class K, int NT>
void GroupsPass(const PackedTile& tile, int64_t nb, const QuantizedActivations& acts, int64_t t0,
                float* y, int64_t ldy) {
  const ActRows<NT> rows(acts, t0);
  float* yt = y + t0 * ldy;
  int g = 0;
  if constexpr (HasPairBlock<K>) {
    if constexpr (NT <= K::kPairRows) {
      // One pass over a tile of two groups (decode, verification): the next tile is read next.
      if (tile.n_groups == 2 && acts.n_rows <= K::kPairRows) {
        GroupPairRows<Q, K, NT, true>(GroupAt<Q>(tile, 0), GroupAt<Q>(tile, 1), nb, tile.end, rows,
                                      GroupRowCount<Q>(tile, 1), yt, ldy);
        return;
      }
      for (; g + 1 < tile.n_groups; g += 2) {
        GroupPairRows<Q, K, NT, false>(GroupAt<Q>(tile, g), GroupAt<Q>(tile, g + 1), nb, tile.end,
                                       rows, GroupRowCount<Q>(tile, g + 1), yt + Q::kLanes * g,
                                       ldy);
      }
    }
  }
  for (; g < tile.n_groups; ++g) {
    GroupRows<Q, K, NT>(GroupAt<Q>(tile, g), nb, tile.end, rows, GroupRowCount<Q>(tile, g),
                        yt + Q::kLanes * g, ldy);
  }
}

// Activation rows in passes of K::kActRows, the tail with a narrower pass; where K has PairBlock
// and the tile two groups, batches of 2 to K::kPairRows rows (verification) in one pass and
// batches larger than K::kActRows (prefill) in passes of K::kPairRows, two groups at a time. Each
// pass goes over all the tile's groups: they stay in cache while the activations stream.
template <TileLanesTrait Q, class K>
void RunFused(const PackedTile& tile, const QuantizedActivations& acts, float* y, int64_t ldy) {
  const int64_t nb = acts.cols / K::kBlockValues;
  int64_t t = 0;
  if constexpr (HasPairBlock<K>) {
    const bool pairs = acts.n_rows > K::kActRows || acts.n_rows <= K::kPairRows;
    if (tile.n_groups >= 2 && pairs) {
      for (; t + K::kPairRows <= acts.n_rows; t += K::kPairRows) {
        GroupsPass<Q, K, K::kPairRows>(tile, nb, acts, t, y, ldy);
      }
      WithRowCount<K::kPairRows - 1>(
          acts.n_rows - t, [&]<int NT>() { GroupsPass<Q, K, NT>(tile, nb, acts, t, y, ldy); });
      return;
    }
  }
  for (; t + K::kActRows <= acts.n_rows; t += K::kActRows) {
    GroupsPass<Q, K, K::kActRows>(tile, nb, acts, t, y, ldy);
  }
  WithRowCount<K::kActRows - 1>(acts.n_rows - t,
                                [&]<int NT>() { GroupsPass<Q, K, NT>(tile, nb, acts, t, y, ldy); });
}

// Activation rows t0..t0+NT-1 against `n` decoded blocks from block b0, the accumulators carried
// through y between calls (f32 stores and loads: the same values).
template <TileLanesTrait Q, class K, int NT>
void AccumulateDecoded(const typename K::Decoded* dec, int n, const QuantizedActivations& acts,
                       int64_t b0, int64_t t0, int n_out, float* y, int64_t ldy) {
  using F = typename Q::F;
  const ActRows<NT> rows(acts, t0);
  const typename F::M mask = F::FirstN(n_out);
  typename F::V acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = b0 == 0 ? F::Zero() : F::MaskLoad(mask, y + (t0 + t) * ldy);
  for (int i = 0; i < n; ++i) K::template Accumulate<NT>(dec[i], rows, b0 + i, acc);
  StoreLanes<Q, NT>(acc, n_out, y + t0 * ldy, ldy);
}

// Large batches of types whose unpacking is dear: each group's blocks are decoded once,
// K::kDecodeChunkBlocks at a time, into L1, and K::kDecodeRows activation rows at a time read
// them there.
template <TileLanesTrait Q, class K>
void RunDecodeOnce(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                   int64_t ldy) {
  constexpr int kChunk = K::kDecodeChunkBlocks, kRows = K::kDecodeRows;
  const int64_t nb = acts.cols / K::kBlockValues;
  alignas(64) typename K::Decoded dec[kChunk];
  for (int g = 0; g < tile.n_groups; ++g) {
    const Group<Q> group = GroupAt<Q>(tile, g);
    const int n_out = GroupRowCount<Q>(tile, g);
    float* yg = y + Q::kLanes * g;
    for (int64_t b0 = 0; b0 < nb; b0 += kChunk) {
      const int n = static_cast<int>(std::min<int64_t>(kChunk, nb - b0));
      for (int i = 0; i < n; ++i) {
        const int64_t off = (b0 + i) * K::kBlockBytes;
        group.Prefetch(off + K::PrefetchAhead(1), K::kBlockBytes, tile.end);
        K::Decode(group, off, &dec[i]);
      }
      int64_t t = 0;
      for (; t + kRows <= acts.n_rows; t += kRows) {
        AccumulateDecoded<Q, K, kRows>(dec, n, acts, b0, t, n_out, yg, ldy);
      }
      WithRowCount<kRows - 1>(acts.n_rows - t, [&]<int NT>() {
        AccumulateDecoded<Q, K, NT>(dec, n, acts, b0, t, n_out, yg, ldy);
      });
    }
  }
}

// The packed tile of block kernel K: decode-once for batches past K::kActRows where K has it,
// the fused passes otherwise.
template <TileLanesTrait Q, class K>
void RunPackedTile(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                   int64_t ldy) {
  if constexpr (HasDecodeOnce<K>) {
    if (acts.n_rows > K::kActRows) return RunDecodeOnce<Q, K>(tile, acts, y, ldy);
  }
  RunFused<Q, K>(tile, acts, y, ldy);
}

}  // namespace tandem::kernels::simd::packed
