// AVX-512 VNNI tiles over interleaved weights (matmul_repack.h) for Q4_0, Q8_0, Q4_K and Q6_K in
// groups of 16 rows: zmm lane r is row r of the group. One 64-byte load holds the 16 rows' next 4
// quants and one VPDPBUSD against a broadcast activation dword adds 64 exact byte products: the
// AVX2 tiles spend a broadcast, a maddubs and an add per 32. A group is one stream of memory and
// the next group follows it, so decoding reads the matrix front to back.
//
// Small batches (decode, verification: T <= K::kActRows) decode each block as it is used and
// keep one accumulator per activation row in registers; decoding of long rows (a tile of two
// groups, matmul.cpp), verifications of 2-4 rows and larger batches (prefill, 4 rows at a time)
// of Q4_0 and Q8_0, whose unpacking is cheap, go over two groups at once (two memory streams),
// so that each broadcast activation dword feeds two VPDPBUSD (PairBlock): with one product per
// broadcast, the broadcasts bounded the tile. For Q4_K and Q6_K, whose unpacking costs a large
// share of the products, a larger batch decodes each group's blocks once, a few at a time, into
// L1, and every activation row reads them there (RunDecodeOnce). A group is 16 rows, one zmm,
// rather than two 8-row groups side by side: two streams restarting at every pair cost short
// rows (K = 1536) much of their bandwidth. What each choice gained: bench/README.md § Kernel
// choices.
//
// Per output element the sequence is the reference's (dot_ref.h): exact integer block sums
// (weights as unsigned bytes w + o against signed activations, minus o * sum(a): the same
// integer), then the same f32 multiplies and fused multiply-adds in block order, the same for
// every T, so results are bitwise equal to the row-major tiles and to every other path.

// GCC 12 reports its own _mm512_undefined_*() placeholders inside intrinsics as uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/dot_lanes.h"
#include "kernels/packed_layout.h"
#include "kernels/simd/packed-inl.h"
#include "kernels/simd/quant_tile-inl.h"

namespace tandem::kernels::avx512 {
namespace {

using L = TileLanes;
using simd::packed::MinSub;
using simd::packed::ScaleAdd;

constexpr int64_t kPrefetchAhead = 1024;  // ahead of the block being decoded, 8-row units (2 KiB)

// One group of 16 rows. Offsets are those of the 8-row layout the kernels below are written in
// (the AVX2 tiles' units: 32 bytes per dword chunk, 16 per fp16 scale vector); the 16-row layout
// has each at twice the offset (matmul_repack.h).
struct Group {
  const uint8_t* p;
  // Dword chunk at `offset`: lane r = row r's dword.
  __m512i Load(int64_t offset) const {
    return _mm512_loadu_si512(reinterpret_cast<const void*>(p + 2 * offset));
  }
  // The fp16 values at `offset` (one per row) as 16 f32 lanes.
  __m512 Halves(int64_t offset) const {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2 * offset)));
  }
  // `bytes` of the 8-row layout at `offset` (the next group's, at or past this one's end: it
  // follows in memory), up to `end`.
  void Prefetch(int64_t offset, int64_t bytes, const uint8_t* end) const {
    const int64_t limit = end - p;
    for (int64_t l = 2 * offset; l < 2 * (offset + bytes) && l < limit; l += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(p + l), _MM_HINT_T0);
    }
  }
};

// sum_k w[k] . a[4k..4k+3] - (sum_a << shift) over a 32-value block, exact (two chains of 4
// dot products; one chain of 8 was no faster with 16 rows in flight).
inline __m512i DotBlock(const __m512i (&w)[8], const int8_t* a, int32_t sum_a, int shift) {
  __m512i even = _mm512_setzero_si512(), odd = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int k = 0; k < 8; k += 2) {
    even = _mm512_dpbusd_epi32(even, w[k], L::BroadcastDword(a + 4 * k));
    odd = _mm512_dpbusd_epi32(odd, w[k + 1], L::BroadcastDword(a + 4 * k + 4));
  }
  const __m512i offset = _mm512_slli_epi32(_mm512_set1_epi32(sum_a), shift);
  return _mm512_sub_epi32(_mm512_add_epi32(even, odd), offset);
}

using simd::packed::BroadcastPair16;
using simd::packed::Pair16;

// The 32-value types (Q4_0, Q8_0: 8 fp16 scales, then the quants): W::Decode gives each
// block's 8 quant vectors as unsigned bytes w + 2^kShift, and per lane and row the exact
// sum_i (w_i + 2^kShift) a_i - (sum(a) << kShift) enters acc = fma(d_w * d_a, float(.), acc).
// Unpacking is as cheap as reading a decoded copy, so every batch takes the fused path.
template <class W, int kShift>
struct Packed32 {
  static constexpr int kActRows = 16;
  // Activation rows per pass when two groups go together (PairBlock): 16 quant vectors, 2 scale
  // vectors and 2 x 4 accumulators fill the 32 registers.
  static constexpr int kPairRows = kPackedPairRows;
  static constexpr bool kDecodeOnce = false;
  static constexpr int64_t kBlockValues = 32;
  struct Decoded {
    __m512i w[8];  // w[k]: elements 4k..4k+3
    __m512 d;
  };
  template <int NT>
  static void Block(const Group& g, int64_t off, const ActRows<NT>& rows, int64_t b,
                    __m512 acc[NT]) {
    Decoded dec;
    W::Decode(g, off, &dec);
    dec.d = g.Halves(off + W::kScales);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const __m512i s = DotBlock(dec.w, rows.qs[t] + 32 * b, rows.sum32[t][b], kShift);
      acc[t] = ScaleAdd<L>(dec.d, rows.d[t][b], s, acc[t]);
    }
  }
  // Block b of two groups at once: each broadcast activation dword feeds both groups' VPDPBUSD
  // (one broadcast per two products instead of one per product: the broadcasts, which are
  // loads, bounded Block). The integer sum starts from -(sum(a) << kShift) in one chain: the
  // same exact integer as DotBlock's.
  template <int NT>
  static void PairBlock(const Group& g0, const Group& g1, int64_t off, const ActRows<NT>& rows,
                        int64_t b, __m512 (&acc)[2][NT]) {
    Decoded dec[2];
    W::Decode(g0, off, &dec[0]);
    W::Decode(g1, off, &dec[1]);
    dec[0].d = g0.Halves(off + W::kScales);
    dec[1].d = g1.Halves(off + W::kScales);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const int8_t* a = rows.qs[t] + 32 * b;
      __m512i s0 = _mm512_set1_epi32(-rows.sum32[t][b] * (1 << kShift)), s1 = s0;
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) {
        const __m512i x = L::BroadcastDword(a + 4 * k);
        s0 = _mm512_dpbusd_epi32(s0, dec[0].w[k], x);
        s1 = _mm512_dpbusd_epi32(s1, dec[1].w[k], x);
      }
      acc[0][t] = ScaleAdd<L>(dec[0].d, rows.d[t][b], s0, acc[0][t]);
      acc[1][t] = ScaleAdd<L>(dec[1].d, rows.d[t][b], s1, acc[1][t]);
    }
  }
};

// Q4_0 group block: 8 fp16 scales, then 4 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]:
// low nibbles q of elements 4k..4k+3, high nibbles of 16 + 4k..+3; the value is q - 8).
struct PackedQ4_0 : Packed32<PackedQ4_0, 3>, packed::Q4_0 {
  static void Decode(const Group& g, int64_t off, Decoded* out) {
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m512i raw = g.Load(off + Quants(k));
      out->w[k] = L::LowNibbles(raw);
      out->w[4 + k] = L::HighNibbles(raw);
    }
  }
};

// Q8_0 group block: 8 fp16 scales, then 8 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]).
struct PackedQ8_0 : Packed32<PackedQ8_0, 7>, packed::Q8_0 {
  static void Decode(const Group& g, int64_t off, Decoded* out) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) out->w[k] = L::SignedBytes(g.Load(off + Quants(k)));
  }
};

// isum[t] += sc * sum_l w[l] . a_t[4l..4l+3] for the kSlots quant vectors of one sub-block whose
// first value is `first` of super-block b (the rows' chains interleave: one chain would wait on
// VPDPBUSD's latency).
template <int NT, int kSlots>
inline void SubBlock(const __m512i* w, __m512i sc, const ActRows<NT>& rows, int64_t b, int first,
                     __m512i (&isum)[NT]) {
  __m512i s[NT];
#pragma GCC unroll 8
  for (int l = 0; l < kSlots; ++l) {
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const __m512i x = L::BroadcastDword(rows.qs[t] + 256 * b + first + 4 * l);
      s[t] = _mm512_dpbusd_epi32(l == 0 ? _mm512_setzero_si512() : s[t], w[l], x);
    }
  }
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(s[t], sc));
}

// The 256-value types (Q4_K, Q6_K): a super-block is 8 parts of 8 quant vectors each.
// Q::DecodeScales, Q::Quants(part) unpack them, Q::Part adds a part's products to isum and
// Q::Finish turns isum into the f32 accumulation. Block unpacks each part as it is used (its
// quants stay in registers); Decode and Accumulate split the same work for the decode-once path.
template <class Q>
struct PackedK {
  static constexpr int64_t kBlockValues = 256;
  static constexpr bool kDecodeOnce = true;
  struct Decoded {
    typename Q::Scales s;
    __m512i w[64];  // part p's quant vectors at 8p
  };
  static void Decode(const Group& g, int64_t off, Decoded* out) {
    Q::DecodeScales(g, off, &out->s);
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) Q::Quants(g, off, p, out->w + 8 * p);
  }
  template <int NT>
  static void Block(const Group& g, int64_t off, const ActRows<NT>& rows, int64_t b,
                    __m512 acc[NT]) {
    typename Q::Scales sc;
    Q::DecodeScales(g, off, &sc);
    __m512i isum[NT];
    for (int t = 0; t < NT; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) {
      __m512i w[8];
      Q::Quants(g, off, p, w);
      Q::Part(w, sc, rows, b, p, isum);
    }
    Q::Finish(sc, rows, b, isum, acc);
  }
  template <int NT>
  static void Accumulate(const Decoded& dec, const ActRows<NT>& rows, int64_t b, __m512 acc[NT]) {
    __m512i isum[NT];
    for (int t = 0; t < NT; ++t) isum[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int p = 0; p < 8; ++p) Q::Part(dec.w + 8 * p, dec.s, rows, b, p, isum);
    Q::Finish(dec.s, rows, b, isum, acc);
  }
};

// Q4_K group block: 36 x 32 bytes, chunk k lane r = dword k of row r's block (d|dmin, 3 dwords
// of scales, 32 of quants). Quants dword 8c + l holds elements 64c + 4l..+3 (low nibbles) and
// 64c + 32 + 4l..+3 (high nibbles): sub-block j is nibble half j % 2 of dwords 8(j / 2)..+7, and
// part j is sub-block j. Unpacking costs a third of the products.
// acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} q_i a_i), acc);
// acc = fma(-(dmin * d_a), float(sum_j m_j * bsum_j), acc).
struct PackedQ4_K : PackedK<PackedQ4_K> {
  using Layout = packed::Q4_K;
  static constexpr int kActRows = 8;
  static constexpr int64_t kBlockBytes = Layout::kBlockBytes;
  struct Scales {
    __m512i sc[8];
    __m512i mins[4];  // (m_2i, m_2i+1) as int16 pairs
    __m512 d, dmin;
  };
  static void DecodeScales(const Group& g, int64_t off, Scales* out) {
    const __m512i h0 = g.Load(off + Layout::kScaleMin), h1 = g.Load(off + Layout::Scales(0)),
                  h2 = g.Load(off + Layout::Scales(1)), h3 = g.Load(off + Layout::Scales(2));
    __m512i m[8];
    simd::UnpackScaleMinK4<L>(h1, h2, h3, out->sc, m);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) out->mins[i] = Pair16<L>(m[2 * i], m[2 * i + 1]);
    out->d = L::HalfToFloat(h0);
    out->dmin = L::HalfToFloat<true>(h0);
  }
  // Sub-block j's 8 quant vectors.
  static void Quants(const Group& g, int64_t off, int j, __m512i w[8]) {
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
      const __m512i raw = g.Load(off + Layout::Quants(8 * (j / 2) + l));
      w[l] = j % 2 == 0 ? L::LowNibbles(raw) : L::HighNibbles(raw);
    }
  }
  template <int NT>
  static void Part(const __m512i* w, const Scales& sc, const ActRows<NT>& rows, int64_t b, int j,
                   __m512i (&isum)[NT]) {
    SubBlock<NT, 8>(w, sc.sc[j], rows, b, 32 * j, isum);
  }
  template <int NT>
  static void Finish(const Scales& sc, const ActRows<NT>& rows, int64_t b,
                     const __m512i (&isum)[NT], __m512 acc[NT]) {
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const int32_t* sums = rows.sum32[t] + 8 * b;
      __m512i imin = _mm512_setzero_si512();
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) {
        imin = _mm512_dpwssd_epi32(imin, sc.mins[i], BroadcastPair16<L>(sums + 2 * i));
      }
      acc[t] = ScaleAdd<L>(sc.d, rows.d[t][b], isum[t], acc[t]);
      acc[t] = MinSub<L>(sc.dmin, rows.d[t][b], imin, acc[t]);
    }
  }
};

// Q6_K group block: 52 x 32 bytes (chunk k lane r = dword k of row r's ql, qh, scales), then the
// 8 fp16 scales d. Element 128n + 32k + 4l (l < 8): low bits in ql dword 16n + 8(k & 1) + l
// (high nibble for k >= 2), high bits (qh dword 32 + 8n + l) >> 2k; its 6-bit q has value
// q - 32. Those 32 elements are sub-blocks 8n + 2k (l < 4) and 8n + 2k + 1: part p = 4n + k.
// Unpacking costs as much as the products.
// acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} q_i a_i - 32 * sum_j sc_j * bsum_j), acc).
struct PackedQ6_K : PackedK<PackedQ6_K> {
  using Layout = packed::Q6_K;
  static constexpr int kActRows = 6;
  static constexpr int64_t kBlockBytes = Layout::kBlockBytes;
  struct Scales {
    __m512i sc[16];
    __m512i scp[8];  // (sc_2i, sc_2i+1) as int16 pairs
    __m512 d;
  };
  static void DecodeScales(const Group& g, int64_t off, Scales* out) {
    // Scale of sub-block j: signed byte j % 4 of scale dword j / 4.
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
      const __m512i sd = g.Load(off + Layout::Scales(i));
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        out->sc[4 * i + j] = _mm512_srai_epi32(_mm512_slli_epi32(sd, 24 - 8 * j), 24);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) out->scp[i] = Pair16<L>(out->sc[2 * i], out->sc[2 * i + 1]);
    out->d = g.Halves(off + Layout::kD);
  }
  // Part p's 8 quant vectors: sub-blocks 2p (the first 4) and 2p + 1.
  static void Quants(const Group& g, int64_t off, int p, __m512i w[8]) {
    const int n = p / 4, k = p % 4;
#pragma GCC unroll 8
    for (int l = 0; l < 8; ++l) {
      w[l] = simd::packed::Q6KCodes<L>(g.Load(off + Layout::Ql(16 * n + 8 * (k & 1) + l)),
                                       g.Load(off + Layout::Qh(8 * n + l)), k);
    }
  }
  template <int NT>
  static void Part(const __m512i* w, const Scales& sc, const ActRows<NT>& rows, int64_t b, int p,
                   __m512i (&isum)[NT]) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * p + h;
      SubBlock<NT, 4>(w + 4 * h, sc.sc[j], rows, b, 16 * j, isum);
    }
  }
  template <int NT>
  static void Finish(const Scales& sc, const ActRows<NT>& rows, int64_t b,
                     const __m512i (&isum)[NT], __m512 acc[NT]) {
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const int32_t* sums = rows.sum16[t] + 16 * b;
      __m512i corr = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        corr = _mm512_dpwssd_epi32(corr, sc.scp[i], BroadcastPair16<L>(sums + 2 * i));
      }
      acc[t] = ScaleAdd<L>(sc.d, rows.d[t][b], L::Sub(isum[t], L::ShiftLeft(corr, 5)), acc[t]);
    }
  }
};

// The rows of one group against the activation rows of `rows`, each block decoded and used at
// once, stored to y (the group's column 0), the lanes of `mask`.
template <class K, int NT>
void GroupRows(const Group& g, int64_t nb, const uint8_t* end, const ActRows<NT>& rows,
               __mmask16 mask, float* y, int64_t ldy) {
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  // With more than 4 rows a block takes long enough that 2 KiB ahead arrives late: 8 KiB
  // (bench/README.md § Kernel choices).
  constexpr int64_t kAhead = NT > 4 ? 4 * kPrefetchAhead : kPrefetchAhead;
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * K::kBlockBytes;
    g.Prefetch(off + kAhead, K::kBlockBytes, end);
    K::template Block<NT>(g, off, rows, b, acc);
  }
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + t * ldy, mask, acc[t]);
}

// Lanes of group g that hold output rows.
inline __mmask16 GroupMask(const PackedTile& tile, int g) {
  const int n = tile.n_rows - kPackedGroupRows * g;
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

inline Group GroupAt(const PackedTile& tile, int g) {
  return {tile.groups + g * tile.group_bytes};
}

// Two groups' rows against the activation rows of `rows` (K::PairBlock), stored as GroupRows.
// kToNextPair: the two groups after these are read next (a tile of two groups read in one pass:
// decode, verification), so each stream's prefetches run on past its group's end into its own
// next group (the group after the partner), not into the other stream. (Not for a prefill tile,
// re-read from L2 by every pass of activation rows: there the extra registers and prefetches
// made prefill slower.)
template <class K, int NT, bool kToNextPair>
void GroupPairRows(const Group& g0, const Group& g1, int64_t nb, const uint8_t* end,
                   const ActRows<NT>& rows, __mmask16 mask1, float* y, int64_t ldy) {
  __m512 acc[2][NT];
  for (int t = 0; t < NT; ++t) acc[0][t] = acc[1][t] = _mm512_setzero_ps();
  const int64_t group_bytes = g1.p - g0.p;
  const Group next0{g1.p + group_bytes}, next1{g1.p + 2 * group_bytes};
  // 4 KiB ahead in each stream: 2 KiB arrived late for verifications of 4 rows, and decode and
  // prefill do not mind (bench/README.md § Kernel choices).
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * K::kBlockBytes, ahead = off + 2 * kPrefetchAhead;
    if (kToNextPair && 2 * ahead >= group_bytes) {
      next0.Prefetch(ahead - group_bytes / 2, K::kBlockBytes, end);
      next1.Prefetch(ahead - group_bytes / 2, K::kBlockBytes, end);
    } else {
      g0.Prefetch(ahead, K::kBlockBytes, end);
      g1.Prefetch(ahead, K::kBlockBytes, end);
    }
    K::template PairBlock<NT>(g0, g1, off, rows, b, acc);
  }
  for (int t = 0; t < NT; ++t) {
    _mm512_storeu_ps(y + t * ldy, acc[0][t]);
    _mm512_mask_storeu_ps(y + t * ldy + kPackedGroupRows, mask1, acc[1][t]);
  }
}

template <class K>
concept HasPairBlock = requires {
  K::kPairRows;
};

// Activation rows t0..t0+NT-1 over every group of the tile (two at a time where K can).
template <class K, int NT>
void GroupsPass(const PackedTile& tile, int64_t nb, const QuantizedActivations& acts, int64_t t0,
                float* y, int64_t ldy) {
  const ActRows<NT> rows(acts, t0);
  int g = 0;
  if constexpr (HasPairBlock<K>) {
    if constexpr (NT <= K::kPairRows) {
      // One pass over a tile of two groups (decode, verification): the next tile is read next.
      if (tile.n_groups == 2 && acts.n_rows <= K::kPairRows) {
        GroupPairRows<K, NT, true>(GroupAt(tile, 0), GroupAt(tile, 1), nb, tile.end, rows,
                                   GroupMask(tile, 1), y + t0 * ldy, ldy);
        return;
      }
      for (; g + 1 < tile.n_groups; g += 2) {
        GroupPairRows<K, NT, false>(GroupAt(tile, g), GroupAt(tile, g + 1), nb, tile.end, rows,
                                    GroupMask(tile, g + 1), y + t0 * ldy + kPackedGroupRows * g,
                                    ldy);
      }
    }
  }
  for (; g < tile.n_groups; ++g) {
    GroupRows<K, NT>(GroupAt(tile, g), nb, tile.end, rows, GroupMask(tile, g),
                     y + t0 * ldy + kPackedGroupRows * g, ldy);
  }
}

// Activation rows in passes of K::kActRows, the tail with a narrower pass; where K has PairBlock
// and the tile two groups, batches of 2 to K::kPairRows rows (verification) in one pass and
// batches larger than K::kActRows (prefill) in passes of K::kPairRows, two groups at a time. Each
// pass goes over all the tile's groups: they stay in cache while the activations stream.
// (Batches of 5-16 rows were no faster in pairs: bench_matmul batch/packed/q4_0 T = 8, 16.)
template <class K>
void RunFused(const PackedTile& tile, const QuantizedActivations& acts, float* y, int64_t ldy) {
  const int64_t nb = acts.cols / K::kBlockValues;
  int64_t t = 0;
  if constexpr (HasPairBlock<K>) {
    const bool pairs = acts.n_rows > K::kActRows || acts.n_rows <= K::kPairRows;
    if (tile.n_groups >= 2 && pairs) {
      for (; t + K::kPairRows <= acts.n_rows; t += K::kPairRows) {
        GroupsPass<K, K::kPairRows>(tile, nb, acts, t, y, ldy);
      }
      simd::WithRowCount<K::kPairRows - 1>(
          acts.n_rows - t, [&]<int NT>() { GroupsPass<K, NT>(tile, nb, acts, t, y, ldy); });
      return;
    }
  }
  for (; t + K::kActRows <= acts.n_rows; t += K::kActRows) {
    GroupsPass<K, K::kActRows>(tile, nb, acts, t, y, ldy);
  }
  simd::WithRowCount<K::kActRows - 1>(
      acts.n_rows - t, [&]<int NT>() { GroupsPass<K, NT>(tile, nb, acts, t, y, ldy); });
}

// Activation rows t0..t0+NT-1 against `n` decoded blocks from block b0, the accumulators carried
// through y between calls (f32 stores and loads: the same values).
template <class K, int NT>
void AccumulateDecoded(const typename K::Decoded* dec, int n, const QuantizedActivations& acts,
                       int64_t b0, int64_t t0, __mmask16 mask, float* y, int64_t ldy) {
  const ActRows<NT> rows(acts, t0);
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) {
    acc[t] = b0 == 0 ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mask, y + (t0 + t) * ldy);
  }
  for (int i = 0; i < n; ++i) K::template Accumulate<NT>(dec[i], rows, b0 + i, acc);
  for (int t = 0; t < NT; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * ldy, mask, acc[t]);
}

// Large batches of types whose unpacking is dear: each group's blocks are decoded once, a few at
// a time, into L1, and every activation row reads them there.
template <class K>
void RunDecodeOnce(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                   int64_t ldy) {
  constexpr int kChunkBlocks = 4;  // 4 decoded blocks: 20-23 KB, in L1
  constexpr int kRows = 4;         // activation rows per pass over them (8 spilled)
  const int64_t nb = acts.cols / K::kBlockValues;
  alignas(64) typename K::Decoded dec[kChunkBlocks];
  for (int g = 0; g < tile.n_groups; ++g) {
    const Group group = GroupAt(tile, g);
    const __mmask16 mask = GroupMask(tile, g);
    float* yg = y + kPackedGroupRows * g;
    for (int64_t b0 = 0; b0 < nb; b0 += kChunkBlocks) {
      const int n = static_cast<int>(std::min<int64_t>(kChunkBlocks, nb - b0));
      for (int i = 0; i < n; ++i) {
        const int64_t off = (b0 + i) * K::kBlockBytes;
        group.Prefetch(off + kPrefetchAhead, K::kBlockBytes, tile.end);
        K::Decode(group, off, &dec[i]);
      }
      int64_t t = 0;
      for (; t + kRows <= acts.n_rows; t += kRows) {
        AccumulateDecoded<K, kRows>(dec, n, acts, b0, t, mask, yg, ldy);
      }
      simd::WithRowCount<kRows - 1>(acts.n_rows - t, [&]<int NT>() {
        AccumulateDecoded<K, NT>(dec, n, acts, b0, t, mask, yg, ldy);
      });
    }
  }
}

template <class K>
void RunPackedTile(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                   int64_t ldy) {
  if constexpr (K::kDecodeOnce) {
    if (acts.n_rows > K::kActRows) return RunDecodeOnce<K>(tile, acts, y, ldy);
  }
  RunFused<K>(tile, acts, y, ldy);
}

}  // namespace

TANDEM_DEFINE_PACKED_TILE(Q4_0, RunPackedTile<PackedQ4_0>)
TANDEM_DEFINE_PACKED_TILE(Q8_0, RunPackedTile<PackedQ8_0>)
TANDEM_DEFINE_PACKED_TILE(Q4_K, RunPackedTile<PackedQ4_K>)
TANDEM_DEFINE_PACKED_TILE(Q6_K, RunPackedTile<PackedQ6_K>)

}  // namespace tandem::kernels::avx512
