// The packed tiles' block kernels, one template per type (Q4_0, Q8_0, Q4_K, Q6_K) over the lane
// trait L (tile_lanes.h) of the ISA translation unit that includes them and that ISA's tuning T;
// packed_tile-inl.h's drivers run them. In a group (packed_layout.h) lane r is weight row r, and
// one vector load gives every row's next dword, so a block needs no transposition or gathers.
//
// What differs between ISAs is a tile shape, not an algorithm:
// - L's partial sums (tile_lanes.h): how many byte products a running sum holds before it is
//   widened to i32 lanes (maddubs's i16 lanes: a Q4 block or sub-block in one, Q6_K two vectors,
//   Q8_0 one; VNNI: anything), and signed weights as magnitudes (no VNNI) or biased by 128;
// - T::kBlockInRegisters: with 32 registers a 32-value block's 8 quant vectors stay in registers
//   and each activation row runs its chains over them; with 16, one quant vector at a time serves
//   every row of the pass, and the rows' partials stay in registers instead (T::kPinPartials:
//   an empty asm keeps GCC from hoisting the next step's products and spilling them);
// - activation rows per pass, prefetch distance, two groups at once (T::kPairRows: each
//   broadcast activation dword feeds both groups' products) and, for the K-quants, decoding each
//   block once into L1 for batches larger than a pass (T::kDecodeOnce).
// T gives kRows32, kRowsQ4_K, kRowsQ6_K, PrefetchAhead(nt), kPinPartials, kBlockInRegisters,
// kPairRows (0: never) and kPairAhead, kDecodeOnce, kDecodeChunkBlocks and kDecodeRows.
//
// Per output element the sequence is the reference's (dot_ref.h): exact integer block sums (any
// grouping of an exact integer sum gives the same integer), then the same f32 multiplies and
// fused multiply-adds in block order, whatever T and the number of rows, so results are bitwise
// equal to the row-major tiles and the scalar path.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kernels/matmul_kernel.h"
#include "kernels/packed_layout.h"
#include "kernels/simd/packed-inl.h"
#include "kernels/simd/packed_tile-inl.h"
#include "kernels/simd/quant_tile-inl.h"
#include "kernels/simd/tile_lanes.h"

namespace tandem::kernels::simd::packed {

// f(std::integral_constant<int, i>{}) for i = 0..N-1, each a constant where it is used (a loop
// whose body is a whole part of a K-quant block is too large for GCC to unroll, and its index
// selects loads and shifts).
template <int N, class F>
[[gnu::always_inline]] inline void StaticFor(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) __attribute__((always_inline)) {
    (f(std::integral_constant<int, I>{}), ...);
  }
  (std::make_integer_sequence<int, N>{});
}

template <class T, class VI, int NT>
[[gnu::always_inline]] inline void Pin(VI (&s)[NT]) {
  if constexpr (T::kPinPartials) {
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) __asm__ volatile("" : "+x"(s[t]));
  }
}

// Per lane: the sum over i of the two int16 products of pairs[i] with (sums[2i], sums[2i + 1]),
// exact and in order (a K-quant block's minimum or offset term from the rows' sub-block sums).
template <TileLanesTrait L, int N>
[[gnu::always_inline]] inline typename L::VI DotPairSums(const typename L::VI (&pairs)[N],
                                                         const int32_t* sums) {
  typename L::VI acc = L::DotWords(L::Zero(), pairs[0], BroadcastPair16<L>(sums));
#pragma GCC unroll 8
  for (int i = 1; i < N; ++i) acc = L::DotWords(acc, pairs[i], BroadcastPair16<L>(sums + 2 * i));
  return acc;
}

// A partial sum that is to end as (its products) + neg_c (neg_c: minus the block's offset in
// every lane): i32 partials (VNNI) start at neg_c, the others take it when widened (Close).
template <TileLanesTrait L>
[[gnu::always_inline]] inline typename L::VI Open(typename L::VI neg_c, typename L::VI w,
                                                  typename L::VI a) {
  if constexpr (L::kPartialI32) {
    return L::DotNext(neg_c, w, a);
  } else {
    return L::DotFirst(w, a);
  }
}
template <TileLanesTrait L>
[[gnu::always_inline]] inline typename L::VI Close(typename L::VI p, typename L::VI neg_c) {
  if constexpr (L::kPartialI32) {
    return p;
  } else {
    return L::Add(L::Widen(p), neg_c);
  }
}

// The 32-value types: 8 fp16 scales, then the quants. C::Step(g, off, k, v) unpacks step k's
// C::kPerStep quant vectors (C::kSteps steps), vector j of step k holding the weights of
// activation bytes 4 * C::Index(k, j)..+3 as unsigned bytes <= C::kWMax; the block's integer sum
// is corrected by -C::kOffset * sum(a) (Q4_0: its -8; Q8_0 on VNNI: the 128 bias). C::kSigned:
// the raw bytes are signed weights, which without VNNI go as magnitudes with their signs moved
// to the activations (L::kSignedAsMagnitude).
template <TileLanesTrait L, class T, class C>
struct Packed32 {
  using VI = typename L::VI;
  using FV = typename L::F::V;
  static constexpr int kActRows = T::kRows32;
  static constexpr int kPairRows = T::kPairRows;
  static constexpr int64_t kPairAhead = T::kPairAhead;
  static constexpr bool kDecodeOnce = false;
  static constexpr int64_t kBlockValues = 32;
  static constexpr int64_t kBlockBytes = C::Layout::kBlockBytes;
  static constexpr int64_t PrefetchAhead(int nt) { return T::PrefetchAhead(nt); }

  static constexpr bool kMagnitudes = C::kSigned && L::kSignedAsMagnitude;
  static constexpr int kVectors = C::kSteps * C::kPerStep;
  // Unsigned weights: one partial holds the whole block (maddubs: 8 terms of 4-bit weights).
  // Signed weights as magnitudes (a product pair fills a 16-bit lane): each term widened alone.
  static_assert(kMagnitudes || L::DotTermsMax(C::kWMax) >= kVectors);
  static_assert(!kMagnitudes || C::kOffset(L::kSignedOffset) == 0);

  static int32_t Offset(const int32_t* sum32, int64_t b) {
    return C::kOffset(L::kSignedOffset) * sum32[b];
  }
  // -Offset of row t's block b in every lane: Q4_0's broadcast from the activations' -8·sum32
  // array (a load), the others' from the scalar. The same integers either way.
  template <int NT>
  [[gnu::always_inline]] static VI NegOffset(const ActRows<NT>& rows, int t, int64_t b) {
    if constexpr (C::kOffsetFromNeg8) {
      static_assert(C::kOffset(L::kSignedOffset) == 8);
      return L::BroadcastDword(reinterpret_cast<const int8_t*>(rows.neg8_sum32[t] + b));
    } else {
      return L::Set1(-Offset(rows.sum32[t], b));
    }
  }
  // Every quant vector of the block, w[i] serving activation bytes 4i..4i+3.
  static void DecodeAll(const Group<L>& g, int64_t off, VI (&w)[kVectors]) {
#pragma GCC unroll 8
    for (int k = 0; k < C::kSteps; ++k) {
      VI v[C::kPerStep];
      C::Step(g, off, k, v);
#pragma GCC unroll 2
      for (int j = 0; j < C::kPerStep; ++j) w[C::Index(k, j)] = v[j];
    }
  }

  template <int NT>
  static void Block(const Group<L>& g, int64_t off, const ActRows<NT>& rows, int64_t b,
                    FV acc[NT]) {
    const FV d = g.Halves(off + C::Layout::kScales);
    if constexpr (T::kBlockInRegisters) {
      static_assert(!kMagnitudes, "each row's chains hold the whole block");
      VI w[kVectors];
      DecodeAll(g, off, w);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        // Two chains (even and odd vectors) per row: one would wait on the product's latency.
        const int8_t* a = rows.qs[t] + 32 * b;
        const VI neg_c = NegOffset(rows, t, b);
        VI even = Open<L>(neg_c, w[0], L::BroadcastDword(a));
        VI odd = L::DotFirst(w[1], L::BroadcastDword(a + 4));
#pragma GCC unroll 4
        for (int i = 2; i < kVectors; i += 2) {
          even = L::DotNext(even, w[i], L::BroadcastDword(a + 4 * i));
          odd = L::DotNext(odd, w[i + 1], L::BroadcastDword(a + 4 * i + 4));
        }
        const VI s = L::Add(Close<L>(even, neg_c), L::Widen(odd));
        acc[t] = ScaleAdd<L>(d, rows.d[t][b], s, acc[t]);
      }
    } else {
      const int8_t* a[NT];
      rows.BlockCodes(b, 32, a);
      [[maybe_unused]] VI s[NT];
      [[maybe_unused]] VI isum[NT];
#pragma GCC unroll 8
      for (int k = 0; k < C::kSteps; ++k) {
        VI v[C::kPerStep];
        C::Step(g, off, k, v);
#pragma GCC unroll 2
        for (int j = 0; j < C::kPerStep; ++j) {
          const int q = k * C::kPerStep + j, i = C::Index(k, j);
          if constexpr (kMagnitudes) {
            const VI w_abs = L::Abs8(v[j]);
#pragma GCC unroll 16
            for (int t = 0; t < NT; ++t) {
              const VI x =
                  L::Widen(L::DotSignedFirst(w_abs, v[j], L::BroadcastDword(a[t] + 4 * i)));
              isum[t] = q == 0 ? x : L::Add(isum[t], x);
            }
            Pin<T>(isum);
          } else {
#pragma GCC unroll 16
            for (int t = 0; t < NT; ++t) {
              const VI x = L::BroadcastDword(a[t] + 4 * i);
              s[t] = q == 0 ? L::DotFirst(v[j], x) : L::DotNext(s[t], v[j], x);
            }
          }
        }
        if constexpr (!kMagnitudes) Pin<T>(s);
      }
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        VI sum;
        if constexpr (kMagnitudes) {
          sum = isum[t];  // signed weights as they are: no offset
        } else {
          sum = L::Add(L::Widen(s[t]), NegOffset(rows, t, b));
        }
        acc[t] = ScaleAdd<L>(d, rows.d[t][b], sum, acc[t]);
      }
    }
  }

  // Block b of two groups at once: each broadcast activation dword feeds both groups' products
  // (one broadcast per two products: the broadcasts, which are loads, bounded Block). Each group
  // and row runs two chains, the even and the odd vectors, as Block does: with one, the passes
  // waited on VPDPBUSD's latency.
  template <int NT>
  static void PairBlock(const Group<L>& g0, const Group<L>& g1, int64_t off,
                        const ActRows<NT>& rows, int64_t b, FV (&acc)[2][NT]) {
    static_assert(!kMagnitudes, "each row's chain holds the whole block");
    VI w0[kVectors], w1[kVectors];
    DecodeAll(g0, off, w0);
    DecodeAll(g1, off, w1);
    const FV d0 = g0.Halves(off + C::Layout::kScales), d1 = g1.Halves(off + C::Layout::kScales);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const int8_t* a = rows.qs[t] + 32 * b;
      const VI neg_c = NegOffset(rows, t, b);
      VI x = L::BroadcastDword(a);
      VI s0 = Open<L>(neg_c, w0[0], x), s1 = Open<L>(neg_c, w1[0], x);
      x = L::BroadcastDword(a + 4);
      VI u0 = L::DotFirst(w0[1], x), u1 = L::DotFirst(w1[1], x);
#pragma GCC unroll 8
      for (int i = 2; i < kVectors; i += 2) {
        x = L::BroadcastDword(a + 4 * i);
        s0 = L::DotNext(s0, w0[i], x);
        s1 = L::DotNext(s1, w1[i], x);
        x = L::BroadcastDword(a + 4 * i + 4);
        u0 = L::DotNext(u0, w0[i + 1], x);
        u1 = L::DotNext(u1, w1[i + 1], x);
      }
      acc[0][t] =
          ScaleAdd<L>(d0, rows.d[t][b], L::Add(Close<L>(s0, neg_c), L::Widen(u0)), acc[0][t]);
      acc[1][t] =
          ScaleAdd<L>(d1, rows.d[t][b], L::Add(Close<L>(s1, neg_c), L::Widen(u1)), acc[1][t]);
    }
  }
};

// Q4_0 group block: 8 fp16 scales, then 4 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]:
// low nibbles q of elements 4k..4k+3, high nibbles of 16 + 4k..+3; the value is q - 8).
template <TileLanesTrait L>
struct Q4_0Codes {
  using Layout = kernels::packed::Q4_0;
  static constexpr int kSteps = 4, kPerStep = 2, kWMax = 15;
  static constexpr bool kSigned = false;
  static constexpr int32_t kOffset(int /*signed_offset*/) { return 8; }
  static constexpr bool kOffsetFromNeg8 = true;
  static constexpr int Index(int k, int j) { return k + 4 * j; }
  [[gnu::always_inline]] static void Step(const Group<L>& g, int64_t off, int k,
                                          typename L::VI (&v)[2]) {
    const typename L::VI raw = g.Load(off + Layout::Quants(k));
    v[0] = L::LowNibbles(raw);
    v[1] = L::HighNibbles(raw);
  }
};

// Q8_0 group block: 8 fp16 scales, then 8 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]).
template <TileLanesTrait L>
struct Q8_0Codes {
  using Layout = kernels::packed::Q8_0;
  static constexpr int kSteps = 8, kPerStep = 1, kWMax = 255;
  static constexpr bool kSigned = true;
  static constexpr int32_t kOffset(int signed_offset) { return signed_offset; }
  static constexpr bool kOffsetFromNeg8 = false;
  static constexpr int Index(int k, int /*j*/) { return k; }
  [[gnu::always_inline]] static void Step(const Group<L>& g, int64_t off, int k,
                                          typename L::VI (&v)[1]) {
    v[0] = L::SignedBytes(g.Load(off + Layout::Quants(k)));
  }
};

template <TileLanesTrait L, class T>
using PackedQ4_0 = Packed32<L, T, Q4_0Codes<L>>;
template <TileLanesTrait L, class T>
using PackedQ8_0 = Packed32<L, T, Q8_0Codes<L>>;

// isum[t] += sc * (the products of one sub-block): w(l) gives its kVectors quant vectors
// (weights <= kWMax), the l-th against activation bytes first + 4l..+3 of super-block b, in runs
// of what a partial holds. Short runs (maddubs with 6-bit weights: two vectors) are unpacked a
// run at a time and each row's run summed and widened at once, so only the rows' sums stay live;
// long ones go a vector at a time, each serving every row, the rows' partials live between.
template <TileLanesTrait L, class T, int kVectors, int kWMax, int NT, class W>
[[gnu::always_inline]] inline void SubBlock(W&& w, typename L::VI sc, const ActRows<NT>& rows,
                                            int64_t b, int first, typename L::VI (&isum)[NT]) {
  using VI = typename L::VI;
  constexpr int kRun = std::min(kVectors, L::DotTermsMax(kWMax));
  static_assert(kRun >= 1 && kVectors % kRun == 0);
  const auto act = [&](int t, int l) {
    return L::BroadcastDword(rows.qs[t] + 256 * b + first + 4 * l);
  };
  if constexpr (kRun <= 2) {
#pragma GCC unroll 8
    for (int l0 = 0; l0 < kVectors; l0 += kRun) {
      VI v[kRun];
#pragma GCC unroll 2
      for (int i = 0; i < kRun; ++i) v[i] = w(l0 + i);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        VI p = L::DotFirst(v[0], act(t, l0));
        if constexpr (kRun == 2) p = L::DotNext(p, v[1], act(t, l0 + 1));
        isum[t] = L::Add(isum[t], L::WidenScaled(p, sc));
      }
      Pin<T>(isum);
    }
  } else {
    VI s[NT];
#pragma GCC unroll 8
    for (int l = 0; l < kVectors; ++l) {
      const VI v = w(l);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        s[t] = l % kRun == 0 ? L::DotFirst(v, act(t, l)) : L::DotNext(s[t], v, act(t, l));
      }
      if ((l + 1) % kRun == 0) {
#pragma GCC unroll 16
        for (int t = 0; t < NT; ++t) isum[t] = L::Add(isum[t], L::WidenScaled(s[t], sc));
        Pin<T>(isum);
      } else {
        Pin<T>(s);
      }
    }
  }
}

// What the 256-value types share: a super-block is 8 parts (Q::Part) between Q's scales and
// Q::Finish; Block unpacks each quant vector as it is used, Decode and Accumulate split the same
// work for the decode-once path (Decoded: the scales and the 64 quant vectors).
template <TileLanesTrait L, class T, class Q>
struct PackedK {
  using VI = typename L::VI;
  using FV = typename L::F::V;
  static constexpr int kPairRows = 0;
  static constexpr bool kDecodeOnce = T::kDecodeOnce;
  static constexpr int kDecodeChunkBlocks = T::kDecodeChunkBlocks;
  static constexpr int kDecodeRows = T::kDecodeRows;
  static constexpr int64_t kBlockValues = 256;
  static constexpr int64_t PrefetchAhead(int nt) { return T::PrefetchAhead(nt); }
  struct Decoded {
    typename Q::Scales s;
    VI w[64];  // part p's quant vectors at 8p
  };
  static void Decode(const Group<L>& g, int64_t off, Decoded* out) {
    Q::DecodeScales(g, off, &out->s);
    StaticFor<8>([&](auto p) __attribute__((always_inline)) {
#pragma GCC unroll 8
      for (int l = 0; l < 8; ++l) out->w[8 * p() + l] = Q::Quant(g, off, p(), l);
    });
  }
  template <int NT>
  [[gnu::always_inline]] static void Block(const Group<L>& g, int64_t off, const ActRows<NT>& rows,
                                           int64_t b, FV acc[NT]) {
    const auto sc = Q::BlockScales(g, off);
    VI isum[NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) isum[t] = L::Zero();
    StaticFor<8>([&](auto p) __attribute__((always_inline)) {
      Q::Part(
          [&](int l) __attribute__((always_inline)) { return Q::Quant(g, off, p(), l); }, sc, rows,
          b, p(), isum);
    });
    Q::Finish(sc, rows, b, isum, acc);
  }
  template <int NT>
  static void Accumulate(const Decoded& dec, const ActRows<NT>& rows, int64_t b, FV acc[NT]) {
    VI isum[NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) isum[t] = L::Zero();
    StaticFor<8>([&](auto p) __attribute__((always_inline)) {
      Q::Part(
          [&](int l) __attribute__((always_inline)) { return dec.w[8 * p() + l]; }, dec.s, rows, b,
          p(), isum);
    });
    Q::Finish(dec.s, rows, b, isum, acc);
  }
};

// Q4_K group block: 36 x 32 bytes, chunk k lane r = dword k of row r's block (d|dmin, 3 dwords
// of scales, 32 of quants). Quants dword 8c + l holds elements 64c + 4l..+3 (low nibbles) and
// 64c + 32 + 4l..+3 (high nibbles): sub-block j is nibble half j % 2 of dwords 8(j / 2)..+7, and
// part j is sub-block j.
// acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} q_i a_i), acc);
// acc = fma(-(dmin * d_a), float(sum_j m_j * bsum_j), acc).
template <TileLanesTrait L, class T>
struct PackedQ4_K : PackedK<L, T, PackedQ4_K<L, T>> {
  using VI = typename L::VI;
  using FV = typename L::F::V;
  using Layout = kernels::packed::Q4_K;
  static constexpr int kActRows = T::kRowsQ4_K;
  static constexpr int64_t kBlockBytes = Layout::kBlockBytes;
  struct Scales {
    VI sc[8];    // as WidenScaled takes them
    VI mins[4];  // (m_2i, m_2i+1) as int16 pairs
    FV d, dmin;
  };
  static Scales BlockScales(const Group<L>& g, int64_t off) {
    Scales sc;
    DecodeScales(g, off, &sc);
    return sc;
  }
  static void DecodeScales(const Group<L>& g, int64_t off, Scales* out) {
    const VI h0 = g.Load(off + Layout::kScaleMin), h1 = g.Load(off + Layout::Scales(0)),
             h2 = g.Load(off + Layout::Scales(1)), h3 = g.Load(off + Layout::Scales(2));
    VI sc[8], m[8];
    UnpackScaleMinK4<L>(h1, h2, h3, sc, m);
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) out->sc[j] = L::WidenScale(sc[j]);
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) out->mins[i] = Pair16<L>(m[2 * i], m[2 * i + 1]);
    out->d = L::HalfToFloat(h0);
    out->dmin = L::template HalfToFloat<true>(h0);
  }
  [[gnu::always_inline]] static VI Quant(const Group<L>& g, int64_t off, int j, int l) {
    const VI raw = g.Load(off + Layout::Quants(8 * (j / 2) + l));
    return j % 2 == 0 ? L::LowNibbles(raw) : L::HighNibbles(raw);
  }
  template <class W, int NT>
  [[gnu::always_inline]] static void Part(W&& w, const Scales& sc, const ActRows<NT>& rows,
                                          int64_t b, int j, VI (&isum)[NT]) {
    SubBlock<L, T, 8, 15>(w, sc.sc[j], rows, b, 32 * j, isum);
  }
  template <int NT>
  static void Finish(const Scales& sc, const ActRows<NT>& rows, int64_t b, const VI (&isum)[NT],
                     FV acc[NT]) {
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const VI imin = DotPairSums<L>(sc.mins, rows.sum32[t] + 8 * b);
      acc[t] = ScaleAdd<L>(sc.d, rows.d[t][b], isum[t], acc[t]);
      acc[t] = MinSub<L>(sc.dmin, rows.d[t][b], imin, acc[t]);
    }
  }
};

// Q6_K group block: 52 x 32 bytes (chunk k lane r = dword k of row r's ql, qh, scales), then the
// 8 fp16 scales d. Element 128n + 32k + 4l (l < 8): low bits in ql dword 16n + 8(k & 1) + l
// (high nibble for k >= 2), high bits (qh dword 32 + 8n + l) >> 2k; its 6-bit q has value
// q - 32. Those 32 elements are sub-blocks 8n + 2k (l < 4) and 8n + 2k + 1: part p = 4n + k.
// acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} q_i a_i - 32 * sum_j sc_j * bsum_j), acc).
template <TileLanesTrait L, class T>
struct PackedQ6_K : PackedK<L, T, PackedQ6_K<L, T>> {
  using VI = typename L::VI;
  using FV = typename L::F::V;
  using Layout = kernels::packed::Q6_K;
  static constexpr int kActRows = T::kRowsQ6_K;
  static constexpr int64_t kBlockBytes = Layout::kBlockBytes;
  // The scales read where they are used (Block: with 16 registers, 24 decoded scale vectors would
  // be spilled and reloaded), and decoded once (the decode-once path).
  struct BlockScalesOf {
    const Group<L>& g;
    int64_t off;
    // Sub-block j's, as WidenScaled takes them: signed byte j % 4 of scale dword j / 4.
    [[gnu::always_inline]] VI Sc(int j) const {
      return L::ByteScale(g.Load(off + Layout::Scales(j / 4)), j % 4);
    }
    // (sc_2i, sc_2i+1) as int16 pairs.
    [[gnu::always_inline]] VI Pair(int i) const {
      return L::SignedBytePair16(g.Load(off + Layout::Scales(i / 2)), 2 * (i % 2), 2 * (i % 2) + 1);
    }
    [[gnu::always_inline]] FV D() const { return g.Halves(off + Layout::kD); }
  };
  struct Scales {
    VI sc[16];
    VI scp[8];
    FV d;
    VI Sc(int j) const { return sc[j]; }
    VI Pair(int i) const { return scp[i]; }
    FV D() const { return d; }
  };
  static BlockScalesOf BlockScales(const Group<L>& g, int64_t off) { return {g, off}; }
  static void DecodeScales(const Group<L>& g, int64_t off, Scales* out) {
    const BlockScalesOf view{g, off};
#pragma GCC unroll 16
    for (int j = 0; j < 16; ++j) out->sc[j] = view.Sc(j);
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) out->scp[i] = view.Pair(i);
    out->d = view.D();
  }
  // Quant vector l of part p: sub-block 2p for l < 4, 2p + 1 for the rest.
  [[gnu::always_inline]] static VI Quant(const Group<L>& g, int64_t off, int p, int l) {
    const int n = p / 4, k = p % 4;
    return Q6KCodes<L>(g.Load(off + Layout::Ql(16 * n + 8 * (k & 1) + l)),
                       g.Load(off + Layout::Qh(8 * n + l)), k);
  }
  template <class W, class S, int NT>
  [[gnu::always_inline]] static void Part(W&& w, const S& sc, const ActRows<NT>& rows, int64_t b,
                                          int p, VI (&isum)[NT]) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int j = 2 * p + h;
      SubBlock<L, T, 4, 63>(
          [&](int l) __attribute__((always_inline)) { return w(4 * h + l); }, sc.Sc(j), rows, b,
          16 * j, isum);
    }
  }
  template <class S, int NT>
  static void Finish(const S& sc, const ActRows<NT>& rows, int64_t b, const VI (&isum)[NT],
                     FV acc[NT]) {
    VI scp[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) scp[i] = sc.Pair(i);
    const FV d = sc.D();
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      const VI corr = DotPairSums<L>(scp, rows.sum16[t] + 16 * b);
      acc[t] = ScaleAdd<L>(d, rows.d[t][b], L::Sub(isum[t], L::ShiftLeft(corr, 5)), acc[t]);
    }
  }
};

}  // namespace tandem::kernels::simd::packed

// Inside an ISA namespace that defines TileLanes and PackedTuning: MatMulPacked<Name> of every
// type of TANDEM_MATMUL_PACKED_TILES (matmul_kernel.h), from its block template Packed<Name>.
#define TANDEM_DEFINE_PACKED_TILE_OF(Name)            \
  TANDEM_DEFINE_PACKED_TILE(                          \
      Name,                                           \
      ::tandem::kernels::simd::packed::RunPackedTile< \
          TileLanes, ::tandem::kernels::simd::packed::Packed##Name<TileLanes, PackedTuning>>)
#define TANDEM_DEFINE_PACKED_TILES TANDEM_MATMUL_PACKED_TILES(TANDEM_DEFINE_PACKED_TILE_OF)
