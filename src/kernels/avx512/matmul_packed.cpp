// AVX-512 VNNI block kernels over interleaved weights (matmul_repack.h) for Q4_0, Q8_0, Q4_K and
// Q6_K in groups of 16 rows: zmm lane r is row r of the group. One 64-byte load holds the 16 rows'
// next 4 quants and one VPDPBUSD against a broadcast activation dword adds 64 exact byte products:
// the AVX2 kernels spend a broadcast, a maddubs and an add per 32. The passes over groups and
// activation rows are simd/packed_tile-inl.h's; what is AVX-512's is chosen here:
// - Q4_0 and Q8_0, whose unpacking is cheap, take two groups at once (PairBlock: each broadcast
//   activation dword feeds two VPDPBUSD; with one product per broadcast, the broadcasts bounded
//   the kernel) for decoding of long rows (a tile of two groups, matmul.cpp), verifications of 2-4
//   rows and prefill (4 rows at a time);
// - Q4_K and Q6_K, whose unpacking costs a large share of the products, decode each group's
//   blocks once into L1 for batches past kActRows, every activation row reading them there.
// A group is 16 rows, one zmm, rather than two 8-row groups side by side: two streams restarting
// at every pair cost short rows (K = 1536) much of their bandwidth. What each choice gained:
// bench/README.md § Kernel choices.
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

#include <cstdint>

#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/dot_lanes.h"
#include "kernels/packed_layout.h"
#include "kernels/simd/packed-inl.h"
#include "kernels/simd/packed_tile-inl.h"

namespace tandem::kernels::avx512 {
namespace {

using L = TileLanes;
using simd::packed::MinSub;
using simd::packed::ScaleAdd;

using Group = simd::packed::Group<L>;

// How far ahead of the block being decoded (8-row units: twice as many bytes) a pass of nt
// activation rows prefetches: with more than 4 rows a block takes long enough that 2 KiB ahead
// arrives late (bench/README.md § Kernel choices).
struct Avx512Block {
  static constexpr int64_t PrefetchAhead(int nt) { return nt > 4 ? 4096 : 1024; }
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
struct Packed32 : Avx512Block {
  static constexpr int kActRows = 16;
  // Activation rows per pass when two groups go together (PairBlock): 16 quant vectors, 2 scale
  // vectors and 2 x 4 accumulators fill the 32 registers. Each stream prefetches 4 KiB ahead:
  // 2 KiB arrived late for verifications of 4 rows, and decode and prefill do not mind.
  static constexpr int kPairRows = kPackedPairRows;
  static constexpr int64_t kPairAhead = 2048;
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
struct PackedK : Avx512Block {
  static constexpr int64_t kBlockValues = 256;
  static constexpr bool kDecodeOnce = true;
  static constexpr int kDecodeChunkBlocks = 4;  // 4 decoded blocks: 20-23 KB, in L1
  static constexpr int kDecodeRows = 4;         // activation rows per pass over them (8 spilled)
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

}  // namespace

TANDEM_DEFINE_PACKED_TILE(Q4_0, simd::packed::RunPackedTile<L, PackedQ4_0>)
TANDEM_DEFINE_PACKED_TILE(Q8_0, simd::packed::RunPackedTile<L, PackedQ8_0>)
TANDEM_DEFINE_PACKED_TILE(Q4_K, simd::packed::RunPackedTile<L, PackedQ4_K>)
TANDEM_DEFINE_PACKED_TILE(Q6_K, simd::packed::RunPackedTile<L, PackedQ6_K>)

}  // namespace tandem::kernels::avx512
