// The matmul tiles for the Q8_K-activation types over a lane trait Q (tile_lanes.h), for the
// ISA translation units only: Q2_K..Q6_K and IQ4_XS. Lane r of group g = tile row
// kLanes * g + r; the driver is quant_tile-inl.h's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/quant_tile-inl.h"
#include "kernels/simd/tile_lanes.h"
#include "tensor/blocks.h"

namespace tandem::kernels::simd::kquant {

// One 256-value super-block of 16 rows. w[g][k] lane r = row kLanes g + r's elements 4k..4k+3 as
// bytes in the trait's encoding (unsigned types: weight + offset); sc[g][j], m[g][j] =
// sub-block j's scale and min (sub-blocks of 32 for Q4_K/Q5_K/IQ4_XS, of 16 for
// Q2_K/Q3_K/Q6_K); d, dmin = super-scales.
template <TileLanesTrait Q, bool kSigned>
struct Decoded : Magnitudes<Q, 64, kSigned && Q::kSignedAsMagnitude> {
  static constexpr bool kSignedWeights = kSigned;
  typename Q::VI w[Q::kGroups][64];
  typename Q::VI sc[Q::kGroups][16];
  typename Q::VI m[Q::kGroups][16];
  typename Q::F::V d[Q::kGroups];
  typename Q::F::V dmin[Q::kGroups];
};

// Q4_K/Q5_K header (d, dmin, 12 bytes of 6-bit scales and mins) of group g at `offset`.
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline void DecodeHeaderK4(const typename Q::Rows& rows, int g,
                                                  int64_t offset, D* out) {
  typename Q::VI h[4];
  Q::LoadTransposed(rows, g, offset, h);
  out->d[g] = Q::HalfToFloat(h[0]);
  out->dmin[g] = Q::template HalfToFloat<true>(h[0]);
  UnpackScaleMinK4<Q>(h[1], h[2], h[3], out->sc[g], out->m[g]);
}

// Q4_K/Q5_K low nibbles at `offset`: qs[32c + l] low -> element 64c + l, high -> 64c + 32 + l.
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline void DecodeNibblesK4(const typename Q::Rows& rows, int g,
                                                   int64_t offset, D* out) {
  for (int chunk = 0; chunk < 8; ++chunk) {
    typename Q::VI q[4];
    Q::LoadTransposed(rows, g, offset + 16 * chunk, q);
    const int c = chunk / 2, h = chunk % 2;
    for (int k = 0; k < 4; ++k) {
      out->w[g][16 * c + 4 * h + k] = Q::LowNibbles(q[k]);
      out->w[g][16 * c + 8 + 4 * h + k] = Q::HighNibbles(q[k]);
    }
  }
}

// Bit `from` of every byte of v moved to bit `to` of that byte (other bits cleared).
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::VI MoveBit(typename Q::VI v, int from, int to) {
  const auto shifted = from <= to ? Q::ShiftLeft(v, to - from) : Q::ShiftRight(v, from - to);
  return Q::And(shifted, Q::Set1Byte(1 << to));
}

// Byte m (0..15) of the transposed 16-byte window v, per lane.
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::VI ByteAt(const typename Q::VI (&v)[4], int m) {
  return Q::Bits(v[m / 4], 8 * (m % 4), 0xFF);
}

// Q2_K/Q3_K low bits: qs[32n + l] bits 2j..2j+1 -> element 128n + 32j + l. Fills w with them
// and, for Q3_K (hmask at hmask_offset >= 0), adds the high bit as bit 2.
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline void DecodeTwoBits(const typename Q::Rows& rows, int g,
                                                 int64_t qs_offset, int64_t hmask_offset, D* out) {
  for (int chunk = 0; chunk < 4; ++chunk) {
    const int n = chunk / 2, h = chunk % 2;  // l = 16h + 4k + i
    typename Q::VI q[4], hm[4];
    Q::LoadTransposed(rows, g, qs_offset + 16 * chunk, q);
    if (hmask_offset >= 0) Q::LoadTransposed(rows, g, hmask_offset + 16 * h, hm);
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 4; ++k) {
        auto v = Q::And(Q::ShiftRight(q[k], 2 * j), Q::Set1Byte(3));
        if (hmask_offset >= 0) v = Q::Or(v, MoveBit<Q>(hm[k], 4 * n + j, 2));
        out->w[g][32 * n + 8 * j + 4 * h + k] = v;
      }
    }
  }
}

// A 6-bit scale from 4 low and 2 high bits, minus 32.
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::VI SixBitScale(typename Q::VI low, typename Q::VI high) {
  return Q::Sub(Q::Or(low, Q::ShiftLeft(high, 4)), Q::Set1(32));
}

template <TileLanesTrait Q>
struct Q2_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  using Decoded = kquant::Decoded<Q, false>;
  static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ2_K;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      typename Q::VI s[4];
      Q::LoadTransposed(rows, g, off + offsetof(B, scales), s);
      for (int k = 0; k < 16; ++k) {
        out->sc[g][k] = Q::Bits(s[k / 4], 8 * (k % 4), 0xF);
        out->m[g][k] = Q::Bits(s[k / 4], 8 * (k % 4) + 4, 0xF);
      }
      DecodeTwoBits<Q>(rows, g, off + offsetof(B, qs), -1, out);
      const auto dm = Q::GatherDword(rows, g, off + offsetof(B, d));  // d | dmin << 16
      out->d[g] = Q::HalfToFloat(dm);
      out->dmin[g] = Q::template HalfToFloat<true>(dm);
    }
  }
};

template <TileLanesTrait Q>
struct Q3_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 4;
  static constexpr bool kHasMins = false;
  using Decoded = kquant::Decoded<Q, false>;
  static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ3_K;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeTwoBits<Q>(rows, g, off + offsetof(B, qs), off + offsetof(B, hmask), out);
      // The block's last 16 bytes: two bytes of qs, the 12 scale bytes (window bytes 2..13) and
      // d (14..15).
      static_assert(offsetof(B, d) + 2 == sizeof(B) && offsetof(B, scales) + 12 == offsetof(B, d));
      typename Q::VI win[4];
      Q::LoadTransposed(rows, g, off + sizeof(B) - 16, win);
      for (int k = 0; k < 16; ++k) {
        const auto low =
            k < 8 ? Q::Bits(ByteAt<Q>(win, 2 + k), 0, 0xF) : Q::Bits(ByteAt<Q>(win, k - 6), 4, 0xF);
        const auto high = Q::Bits(ByteAt<Q>(win, 10 + k % 4), 2 * (k / 4), 3);
        out->sc[g][k] = SixBitScale<Q>(low, high);
      }
      out->d[g] = Q::template HalfToFloat<true>(win[3]);
    }
  }
};

template <TileLanesTrait Q>
struct IQ4_XS {
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = Q::kSignedOffset;
  static constexpr bool kHasMins = false;
  using Decoded = kquant::Decoded<Q, true>;
  static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockIQ4_XS;
    static_assert(offsetof(B, scales_h) == 2 && offsetof(B, scales_l) == 4);
    const int64_t off = sizeof(B) * b;
    const auto table = Q::SignedTable(kIQ4NLValues);
    for (int g = 0; g < Q::kGroups; ++g) {
      typename Q::VI h[4];
      Q::LoadTransposed(rows, g, off, h);  // d | scales_h << 16, scales_l[0..3], then qs
      out->d[g] = Q::HalfToFloat(h[0]);
      for (int ib = 0; ib < 8; ++ib) {
        out->sc[g][ib] = SixBitScale<Q>(Q::Bits(h[1], 8 * (ib / 2) + 4 * (ib % 2), 0xF),
                                        Q::Bits(h[0], 16 + 2 * ib, 3));
      }
      for (int ib = 0; ib < 8; ++ib) {  // qs[16ib + j]: low -> 32ib + j, high -> 32ib + 16 + j
        typename Q::VI q[4];
        Q::LoadTransposed(rows, g, off + offsetof(B, qs) + 16 * ib, q);
        for (int k = 0; k < 4; ++k) {
          out->w[g][8 * ib + k] = Q::LookUp(table, Q::LowNibbles(q[k]));
          out->w[g][8 * ib + 4 + k] = Q::LookUp(table, Q::HighNibbles(q[k]));
        }
      }
      KeepMagnitudes<Q>(g, out);
    }
  }
};

template <TileLanesTrait Q>
struct Q4_K {
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  using Decoded = kquant::Decoded<Q, false>;
  static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ4_K;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeHeaderK4<Q>(rows, g, off, out);
      DecodeNibblesK4<Q>(rows, g, off + offsetof(B, qs), out);
    }
  }
};

template <TileLanesTrait Q>
struct Q5_K {
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  using Decoded = kquant::Decoded<Q, false>;
  static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ5_K;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeHeaderK4<Q>(rows, g, off, out);
      DecodeNibblesK4<Q>(rows, g, off + offsetof(B, qs), out);
      for (int h = 0; h < 2; ++h) {  // qh[16h + 4k + i] holds the fifth bits of l = 16h + 4k + i
        typename Q::VI qh[4];
        Q::LoadTransposed(rows, g, off + offsetof(B, qh) + 16 * h, qh);
        for (int c = 0; c < 4; ++c) {
          for (int k = 0; k < 4; ++k) {
            auto& lo = out->w[g][16 * c + 4 * h + k];
            auto& hi = out->w[g][16 * c + 8 + 4 * h + k];
            lo = Q::Or(lo, MoveBit<Q>(qh[k], 2 * c, 4));
            hi = Q::Or(hi, MoveBit<Q>(qh[k], 2 * c + 1, 4));
          }
        }
      }
    }
  }
};

template <TileLanesTrait Q>
struct Q6_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 32;
  static constexpr bool kHasMins = false;
  using Decoded = kquant::Decoded<Q, false>;
  static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ6_K;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      // Element 128n + 32k + l: low bits in ql[64n + 32(k&1) + l] (high nibble if k >= 2),
      // high bits (qh[32n + l] >> 2k) & 3.
      for (int n = 0; n < 2; ++n) {
        for (int hc = 0; hc < 2; ++hc) {  // l / 16
          typename Q::VI qh[4];
          Q::LoadTransposed(rows, g, off + offsetof(B, qh) + 16 * (2 * n + hc), qh);
          for (int kp = 0; kp < 2; ++kp) {  // k & 1
            typename Q::VI ql[4];
            Q::LoadTransposed(rows, g, off + offsetof(B, ql) + 16 * (4 * n + 2 * kp + hc), ql);
            for (int k = kp; k < 4; k += 2) {
              for (int i = 0; i < 4; ++i) {
                const auto lo = k < 2 ? Q::LowNibbles(ql[i]) : Q::HighNibbles(ql[i]);
                const auto shifted =
                    2 * k <= 4 ? Q::ShiftLeft(qh[i], 4 - 2 * k) : Q::ShiftRight(qh[i], 2 * k - 4);
                out->w[g][32 * n + 8 * k + 4 * hc + i] =
                    Q::Or(lo, Q::And(shifted, Q::Set1Byte(0x30)));
              }
            }
          }
        }
      }
      typename Q::VI s[4];
      Q::LoadTransposed(rows, g, off + offsetof(B, scales), s);
      for (int k = 0; k < 16; ++k) {
        out->sc[g][k] = Q::ShiftRightArith(Q::ShiftLeft(s[k / 4], 24 - 8 * (k % 4)), 24);
      }
      // The dword ending with d: d in its high half.
      out->d[g] = Q::template HalfToFloat<true>(Q::GatherDword(rows, g, off + offsetof(B, d) - 2));
    }
  }
};

// acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} w_i a_i), acc)
//     [; acc = fma(-(dmin * d_a), float(sum_j m_j * bsum_j), acc)].
template <TileLanesTrait Q, class W>
struct Family : W {
  static constexpr int kBlockValues = 256;
  static constexpr int kChunkBlocks = 1;
  using Decoded = typename W::Decoded;

  // One pass over the decoded weights serves every row where one vector holds the tile's rows
  // (their sums stay in registers); with two groups (AVX2: 16 registers) one row at a time, as
  // two rows' sums spill AVX2's registers.
  template <int NT>
  static void Accumulate(const Decoded& dec, const QuantizedActivations& acts, int64_t b,
                         int64_t t0, typename Q::F::V (&acc)[NT][Q::kGroups]) {
    constexpr int kRows = Q::kGroups == 1 ? NT : 1;
    for (int t = 0; t < NT; t += kRows) AccumulateRows<kRows>(dec, acts, b, t0 + t, acc + t);
  }

  template <int NT>
  static void AccumulateRows(const Decoded& dec, const QuantizedActivations& acts, int64_t b,
                             int64_t t0, typename Q::F::V (*acc)[Q::kGroups]) {
    using F = typename Q::F;
    using VI = typename Q::VI;
    constexpr int kSubs = 256 / W::kSubBlock, kSlots = W::kSubBlock / 4;
    const int8_t* qs[NT];
    const int32_t* sums[NT];
    VI isum[NT][Q::kGroups];
    for (int t = 0; t < NT; ++t) {
      qs[t] = acts.qs + (t0 + t) * acts.qs_stride + 256 * b;
      sums[t] = W::kSubBlock == 16 ? acts.sum16 + (t0 + t) * acts.sum16_stride + 16 * b
                                   : acts.sum32 + (t0 + t) * acts.sum32_stride + 8 * b;
      for (int g = 0; g < Q::kGroups; ++g) isum[t][g] = Q::Zero();
    }
    for (int j = 0; j < kSubs; ++j) {
      VI sub[NT][Q::kGroups];
      for (int t = 0; t < NT; ++t) {
        const VI init = W::kOffset == 0 ? Q::Zero() : Q::Set1(-W::kOffset * sums[t][j]);
        for (int g = 0; g < Q::kGroups; ++g) sub[t][g] = init;
      }
      for (int s = 0; s < kSlots; s += 2) {
        const int slot = j * kSlots + s;
        for (int t = 0; t < NT; ++t) {
          const VI a0 = Q::BroadcastDword(qs[t] + 4 * slot);
          const VI a1 = Q::BroadcastDword(qs[t] + 4 * slot + 4);
          for (int g = 0; g < Q::kGroups; ++g)
            sub[t][g] = DotSlots<Q>(sub[t][g], dec, g, slot, a0, a1);
        }
      }
      for (int t = 0; t < NT; ++t) {
        for (int g = 0; g < Q::kGroups; ++g) {
          isum[t][g] = Q::Add(isum[t][g], Q::MulLo(sub[t][g], dec.sc[g][j]));
        }
      }
    }
    for (int t = 0; t < NT; ++t) {
      const auto da = F::Set1(acts.d[(t0 + t) * acts.d_stride + b]);
      for (int g = 0; g < Q::kGroups; ++g) {
        acc[t][g] = F::MulAdd(F::Mul(dec.d[g], da), Q::ToFloat(isum[t][g]), acc[t][g]);
        if constexpr (W::kHasMins) {
          VI imin = Q::Zero();
          for (int j = 0; j < kSubs; ++j) {
            imin = Q::Add(imin, Q::MulLo(dec.m[g][j], Q::Set1(sums[t][j])));
          }
          acc[t][g] = F::NegMulAdd(F::Mul(dec.dmin[g], da), Q::ToFloat(imin), acc[t][g]);
        }
      }
    }
  }
};

}  // namespace tandem::kernels::simd::kquant

// Inside an ISA namespace whose lane trait is named TileLanes: defines its MatMulTile<Name> for
// the Q8_K-activation types.
#define TANDEM_SIMD_KQUANT_TILE(Name)                               \
  TANDEM_DEFINE_QUANT_TILE(                                         \
      Name, ::tandem::kernels::simd::RunQuantTile<                  \
                TileLanes, ::tandem::kernels::simd::kquant::Family< \
                               TileLanes, ::tandem::kernels::simd::kquant::Name<TileLanes>>>)
#define TANDEM_SIMD_DEFINE_KQUANT_TILES TANDEM_MATMUL_Q8_K_TILES(TANDEM_SIMD_KQUANT_TILE)
