// AVX2 block kernels over interleaved weights (matmul_repack.h) for Q4_0, Q8_0, Q4_K and Q6_K:
// lane r of a group is weight row r, and one 32-byte load gives all 8 rows' next 4 quants, so a
// block needs no transposition or gathers. The passes over groups and activation rows are
// simd/packed_tile-inl.h's (each block decoded once per pass of kActRows activation rows); what is
// AVX2's is how a block is multiplied with 16 registers and no VNNI. Each type unpacks one quant
// vector (Q6_K: a pair) at a time and uses it for every row of the pass at once, so what stays
// live is one 16-bit or 32-bit partial sum per row (PinPartials keeps GCC from hoisting the
// products and spilling them); a whole decoded block (8 vectors for Q4_0, 16 for Q8_0, 64+ for
// the K-quants) would spill to the stack. The pass is as wide as the registers allow: Q4_0 and
// Q8_0 keep one partial per row (8 rows), the K-quants a 16-bit sub-block partial and a 32-bit
// block sum per row, so 6 rows (12 registers, plus the quant vector, its mask and a broadcast
// activation). Wider passes spill, and a whole decoded Q8_0 block for fewer rows was slower too
// (bench/README.md § Kernel choices).
//
// Per output element the sequence is the reference's (dot_ref.h): exact integer block sums (any
// grouping of an exact integer sum gives the same integer), then the same f32 multiplies and
// fused multiply-adds in block order, the same for every T, so results are bitwise equal to the
// row-major tiles and the scalar path.
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"
#include "kernels/packed_layout.h"
#include "kernels/simd/packed-inl.h"
#include "kernels/simd/packed_tile-inl.h"
#include "kernels/simd/quant_tile-inl.h"

namespace tandem::kernels::avx2 {
namespace {

using L = TileLanes;
using simd::packed::MinSub;
using simd::packed::ScaleAdd;

using Group = simd::packed::Group<L>;

// Prefetches 1 KiB ahead of the block being decoded, whatever the pass.
struct Avx2Block {
  static constexpr int64_t PrefetchAhead(int /*nt*/) { return 1024; }
};

// Keeps the compiler from hoisting the next step's products above this point: without it GCC
// computes a whole block's maddubs products first and spills them to the stack. It emits no
// instruction.
template <int NT>
inline void PinPartials(__m256i (&s)[NT]) {
#pragma GCC unroll 16
  for (int t = 0; t < NT; ++t) __asm__ volatile("" : "+x"(s[t]));
}

// Q8_0 group block: 8 fp16 scales, then 8 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]).
// Against up to 8 activation rows per decoded block, one quant vector at a time as for Q4_0: per
// lane and row the exact sum_i w_i a_i, as |w| * sign(a, w) (activations are never -128) in
// 32-bit lanes (two products of 127 * 127 overflow 16 bits), then acc = fma(d_w * d_a, float(sum),
// acc).
struct PackedQ8_0Rows : Avx2Block {
  static constexpr int kActRows = 8;
  static constexpr int64_t kBlockValues = 32;
  static constexpr int64_t kBlockBytes = packed::Q8_0::kBlockBytes;
  template <int NT>
  static void Block(Group g, int64_t off, const ActRows<NT>& rows, int64_t b, __m256 acc[NT]) {
    const __m256i ones = _mm256_set1_epi16(1);
    const int8_t* a[NT];
    rows.BlockCodes(b, 32, a);
    __m256i s[NT];
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      const __m256i w = g.Load(off + packed::Q8_0::Quants(k));
      const __m256i w_abs = _mm256_abs_epi8(w);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        const __m256i x = _mm256_madd_epi16(
            _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(L::BroadcastDword(a[t] + 4 * k), w)),
            ones);
        s[t] = k == 0 ? x : _mm256_add_epi32(s[t], x);
      }
      PinPartials<NT>(s);
    }
    const __m256 d = g.Halves(off + packed::Q8_0::kScales);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) acc[t] = ScaleAdd<L>(d, rows.d[t][b], s[t], acc[t]);
  }
};

// Q4_0 group block: 8 fp16 scales, then 4 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]:
// low nibbles q of elements 4k..4k+3, high nibbles of 16 + 4k..+3; the value is q - 8).
// Against up to 8 activation rows per decoded block: the 4 quant vectors are unpacked one
// at a time (low, then high nibbles) and each serves every row at once, so a row's 16-bit
// partial sums stay in a register (NT of them) instead of the block's 8 unpacked vectors.
// Per lane and row: sum_i q_i a_i over the block (16-bit pair sums: 16 products of q <= 15 and
// |a| <= 127 are at most 30480), then - 8 * sum(a) in int32: the exact sum_i (q_i - 8) a_i, and
// the same f32 sequence as PackedQ8_0Rows.
struct PackedQ4_0Rows : Avx2Block {
  static constexpr int kActRows = 8;
  static constexpr int64_t kBlockValues = 32;
  static constexpr int64_t kBlockBytes = packed::Q4_0::kBlockBytes;
  template <int NT>
  static void Block(Group g, int64_t off, const ActRows<NT>& rows, int64_t b, __m256 acc[NT]) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const int8_t* a[NT];
    rows.BlockCodes(b, 32, a);
    __m256i s[NT];
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      const __m256i raw = g.Load(off + packed::Q4_0::Quants(k));
      const __m256i lo = _mm256_and_si256(raw, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        const __m256i x = _mm256_maddubs_epi16(lo, L::BroadcastDword(a[t] + 4 * k));
        s[t] = k == 0 ? x : _mm256_add_epi16(s[t], x);
        s[t] =
            _mm256_add_epi16(s[t], _mm256_maddubs_epi16(hi, L::BroadcastDword(a[t] + 16 + 4 * k)));
      }
      PinPartials<NT>(s);
    }
    const __m256 d = g.Halves(off + packed::Q4_0::kScales);
    const __m256i ones = _mm256_set1_epi16(1);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const __m256i offset = _mm256_slli_epi32(_mm256_set1_epi32(rows.sum32[t][b]), 3);
      const __m256i sum = _mm256_sub_epi32(_mm256_madd_epi16(s[t], ones), offset);
      acc[t] = ScaleAdd<L>(d, rows.d[t][b], sum, acc[t]);
    }
  }
};

using simd::packed::BroadcastPair16;
using simd::packed::Pair16;

// Sum over n weight vectors w[k] (unsigned) of maddubs(w[k], a[4k..4k+3]) in 16-bit lanes.
inline __m256i MaddubsSum(const __m256i* w, const int8_t* a, int n) {
  __m256i p = _mm256_maddubs_epi16(w[0], L::BroadcastDword(a));
#pragma GCC unroll 8
  for (int k = 1; k < n; ++k)
    p = _mm256_add_epi16(p, _mm256_maddubs_epi16(w[k], L::BroadcastDword(a + 4 * k)));
  return p;
}

// Sign-extended bytes of `v` placed as int16 pairs by a pshufb pattern that puts each wanted
// byte in the high half of a 16-bit word (the low half zero): the word shifted right by 8.
inline __m256i SignedBytePairs(__m256i v, __m256i pattern) {
  return _mm256_srai_epi16(_mm256_shuffle_epi8(v, pattern), 8);
}

// pshufb pattern (per 128-bit lane, each dword i of it): words (byte 4i + lo, byte 4i + hi).
inline __m256i PairPattern(int lo, int hi) {
  const __m256i dword0 =
      _mm256_set1_epi32(static_cast<int32_t>(0x00800080u | (lo << 8) | (hi << 24)));
  return _mm256_add_epi8(
      dword0, _mm256_setr_epi8(0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0, 8, 0, 12, 0, 12, 0, 0, 0, 0, 0, 4,
                               0, 4, 0, 8, 0, 8, 0, 12, 0, 12));
}

// Q4_K group block: 36 x 32 bytes, chunk k lane r = dword k of row r's block (d|dmin, 3 dwords
// of scales, 32 of quants). Quants dword 8c + l holds elements 64c + 4l..+3 (low nibbles) and
// 64c + 32 + 4l..+3 (high nibbles): sub-block j is nibble half j % 2 of dwords 8(j / 2)..+7.
struct PackedQ4_K : Avx2Block {
  static constexpr int kActRows = 6;
  static constexpr int64_t kBlockValues = 256;
  static constexpr int64_t kBlockBytes = packed::Q4_K::kBlockBytes;
  // acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} w_i a_i), acc);
  // acc = fma(-(dmin * d_a), float(sum_j m_j * bsum_j), acc). Eight 16-bit products of q <= 15
  // and |a| <= 127 sum to at most 30480 per lane, and times sc <= 63 stays far inside int32.
  // Each sub-block's quants are unpacked once (8 registers) and used for every activation row.
  template <int NT>
  static void Block(Group g, int64_t off, const ActRows<NT>& rows, int64_t b, __m256 acc[NT]) {
    const __m256i h1 = g.Load(off + packed::Q4_K::Scales(0)),
                  h2 = g.Load(off + packed::Q4_K::Scales(1)),
                  h3 = g.Load(off + packed::Q4_K::Scales(2));
    __m256i sc[8], m[8];
    simd::UnpackScaleMinK4<L>(h1, h2, h3, sc, m);
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const int8_t* a[NT];
    __m256i isum[NT];
    rows.BlockCodes(b, 256, a);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 16
    for (int j = 0; j < 8; ++j) {
      __m256i part[NT];  // 16-bit pair sums of sub-block j, one quant vector at a time
#pragma GCC unroll 16
      for (int l = 0; l < 8; ++l) {
        const __m256i raw = g.Load(off + packed::Q4_K::Quants(8 * (j / 2) + l));
        const __m256i w = _mm256_and_si256(j % 2 == 0 ? raw : _mm256_srli_epi16(raw, 4), m4);
#pragma GCC unroll 16
        for (int t = 0; t < NT; ++t) {
          const __m256i x = _mm256_maddubs_epi16(w, L::BroadcastDword(a[t] + 32 * j + 4 * l));
          part[t] = l == 0 ? x : _mm256_add_epi16(part[t], x);
        }
        PinPartials<NT>(part);
      }
      const __m256i scale = Pair16<L>(sc[j], sc[j]);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(part[t], scale));
      }
    }
    __m256i mins[4];
#pragma GCC unroll 16
    for (int i = 0; i < 4; ++i) mins[i] = Pair16<L>(m[2 * i], m[2 * i + 1]);
    const __m256i dm = g.Load(off + packed::Q4_K::kScaleMin);
    const __m256 d = L::HalfToFloat(dm), dmin = L::HalfToFloat<true>(dm);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const int32_t* sums = rows.sum32[t] + 8 * b;
      __m256i imin = _mm256_madd_epi16(mins[0], BroadcastPair16<L>(sums));
#pragma GCC unroll 16
      for (int i = 1; i < 4; ++i) {
        imin = _mm256_add_epi32(imin, _mm256_madd_epi16(mins[i], BroadcastPair16<L>(sums + 2 * i)));
      }
      acc[t] = ScaleAdd<L>(d, rows.d[t][b], isum[t], acc[t]);
      acc[t] = MinSub<L>(dmin, rows.d[t][b], imin, acc[t]);
    }
  }
};

// Q6_K group block: 52 x 32 bytes (chunk k lane r = dword k of row r's ql, qh, scales), then the
// 8 fp16 scales d. Element 128n + 32k + 4l (l < 8): low bits in ql dword 16n + 8(k & 1) + l
// (high nibble for k >= 2), high bits (qh dword 32 + 8n + l) >> 2k; its 6-bit q has value
// q - 32. Those 32 elements are sub-blocks 8n + 2k (l < 4) and 8n + 2k + 1.
struct PackedQ6_K : Avx2Block {
  static constexpr int kActRows = 6;
  static constexpr int64_t kBlockValues = 256;
  static constexpr int64_t kBlockBytes = packed::Q6_K::kBlockBytes;
  // acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} (q_i - 32) a_i), acc), the integer as
  // sum_j sc_j * sum_{i in j} q_i a_i - 32 * sum_j sc_j * bsum_j. Two 16-bit products of q <= 63
  // and |a| <= 127 sum to at most 32004 per lane; every partial sum stays inside int32.
  template <int NT>
  static void Block(Group g, int64_t off, const ActRows<NT>& rows, int64_t b, __m256 acc[NT]) {
    const int8_t* a[NT];
    __m256i isum[NT];
    rows.BlockCodes(b, 256, a);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 16
    for (int n = 0; n < 2; ++n) {
#pragma GCC unroll 16
      for (int k = 0; k < 4; ++k) {
        // Sub-blocks j and j + 1: scales are bytes (j % 4, j % 4 + 1) of scale dword j / 4.
        const int j = 8 * n + 2 * k;
        const __m256i s = g.Load(off + packed::Q6_K::Scales(j / 4));
        const __m256i sc[2] = {SignedBytePairs(s, PairPattern(j % 4, j % 4)),
                               SignedBytePairs(s, PairPattern(j % 4 + 1, j % 4 + 1))};
        // Quant vectors 2h and 2h + 1 (elements 8h..8h+7 of the pair of sub-blocks), unpacked
        // two at a time and used for every row.
#pragma GCC unroll 16
        for (int h = 0; h < 4; ++h) {
          __m256i w[2];
#pragma GCC unroll 16
          for (int i = 0; i < 2; ++i) {
            const int l = 2 * h + i;
            w[i] =
                simd::packed::Q6KCodes<L>(g.Load(off + packed::Q6_K::Ql(16 * n + 8 * (k & 1) + l)),
                                          g.Load(off + packed::Q6_K::Qh(8 * n + l)), k);
          }
#pragma GCC unroll 16
          for (int t = 0; t < NT; ++t) {
            const int8_t* at = a[t] + 16 * j + 8 * h;
            isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(MaddubsSum(w, at, 2), sc[h / 2]));
          }
          PinPartials<NT>(isum);
        }
      }
    }
    __m256i scp[8];  // scales of sub-blocks 2i (low half) and 2i + 1 (high half)
#pragma GCC unroll 16
    for (int i = 0; i < 8; ++i) {
      scp[i] = SignedBytePairs(g.Load(off + packed::Q6_K::Scales(i / 2)),
                               PairPattern(2 * (i % 2), 2 * (i % 2) + 1));
    }
    const __m256 d = g.Halves(off + packed::Q6_K::kD);
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const int32_t* sums = rows.sum16[t] + 16 * b;
      __m256i corr = _mm256_madd_epi16(scp[0], BroadcastPair16<L>(sums));
#pragma GCC unroll 16
      for (int i = 1; i < 8; ++i) {
        corr = _mm256_add_epi32(corr, _mm256_madd_epi16(scp[i], BroadcastPair16<L>(sums + 2 * i)));
      }
      acc[t] = ScaleAdd<L>(d, rows.d[t][b], L::Sub(isum[t], L::ShiftLeft(corr, 5)), acc[t]);
    }
  }
};

}  // namespace

TANDEM_DEFINE_PACKED_TILE(Q4_0, simd::packed::RunPackedTile<L, PackedQ4_0Rows>)
TANDEM_DEFINE_PACKED_TILE(Q8_0, simd::packed::RunPackedTile<L, PackedQ8_0Rows>)
TANDEM_DEFINE_PACKED_TILE(Q4_K, simd::packed::RunPackedTile<L, PackedQ4_K>)
TANDEM_DEFINE_PACKED_TILE(Q6_K, simd::packed::RunPackedTile<L, PackedQ6_K>)

}  // namespace tandem::kernels::avx2
