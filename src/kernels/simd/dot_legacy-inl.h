// The matmul tiles for the 32-value block types over a lane trait Q (tile_lanes.h), for the ISA
// translation units only: Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4 (Q8_0 activations) and Q4_1, Q5_1
// (Q8_1 activations). Lane r of group g = tile row kLanes * g + r; the driver is
// quant_tile-inl.h's.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/quant_tile-inl.h"
#include "kernels/simd/tile_lanes.h"
#include "tensor/blocks.h"

namespace tandem::kernels::simd::legacy {

// One 32-value block of 16 rows: w[g][k] lane r = row kLanes g + r's elements 4k..4k+3 as bytes
// in the trait's encoding (unsigned types: weight + offset); d, m = the rows' scales and mins.
template <TileLanesTrait Q, bool kSigned>
struct Decoded : Magnitudes<Q, 8, kSigned && Q::kSignedAsMagnitude> {
  static constexpr bool kSignedWeights = kSigned;
  typename Q::VI w[Q::kGroups][8];
  typename Q::F::V d[Q::kGroups];
  typename Q::F::V m[Q::kGroups];
};

// Nibble blocks (qs[j]: element j low, j + 16 high) of group g at `offset`.
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline void DecodeNibbles(const typename Q::Rows& rows, int g,
                                                 int64_t offset, D* out) {
  typename Q::VI raw[4];
  Q::LoadTransposed(rows, g, offset, raw);
  for (int k = 0; k < 4; ++k) {
    out->w[g][k] = Q::LowNibbles(raw[k]);
    out->w[g][4 + k] = Q::HighNibbles(raw[k]);
  }
}

// The fifth bits from the dwords qh (bit 4k + i -> element 4k + i's bit 4).
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline void AddHighBits(typename Q::VI qh, int g, D* out) {
  for (int k = 0; k < 8; ++k) {
    out->w[g][k] = Q::Or(out->w[g][k], Q::SpreadHighBits(Q::ShiftRight(qh, 4 * k)));
  }
}

// Replaces each nibble code of group g by table[code] in the signed encoding.
template <TileLanesTrait Q, class D>
[[gnu::always_inline]] inline void LookUpSigned(typename Q::VI table, int g, D* out) {
  for (int k = 0; k < 8; ++k) out->w[g][k] = Q::LookUp(table, out->w[g][k]);
}

template <TileLanesTrait Q>
struct Q4_0 {
  static constexpr int kOffset = 8;
  using Decoded = legacy::Decoded<Q, false>;
  [[gnu::always_inline]] static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ4_0;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeNibbles<Q>(rows, g, off + offsetof(B, qs), out);
      out->d[g] = Q::HalfToFloat(Q::GatherDword(rows, g, off + offsetof(B, d)));
    }
  }
};

template <TileLanesTrait Q>
struct Q5_0 {
  static constexpr int kOffset = 16;
  using Decoded = legacy::Decoded<Q, false>;
  [[gnu::always_inline]] static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ5_0;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeNibbles<Q>(rows, g, off + offsetof(B, qs), out);
      AddHighBits<Q>(Q::GatherDword(rows, g, off + offsetof(B, qh)), g, out);
      out->d[g] = Q::HalfToFloat(Q::GatherDword(rows, g, off + offsetof(B, d)));
    }
  }
};

template <TileLanesTrait Q>
struct Q8_0 {
  static constexpr int kOffset = Q::kSignedOffset;
  using Decoded = legacy::Decoded<Q, true>;
  [[gnu::always_inline]] static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ8_0;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      Q::LoadTransposed(rows, g, off + offsetof(B, qs), out->w[g]);
      Q::LoadTransposed(rows, g, off + offsetof(B, qs) + 16, out->w[g] + 4);
      for (int k = 0; k < 8; ++k) out->w[g][k] = Q::SignedBytes(out->w[g][k]);
      KeepMagnitudes<Q>(g, out);
      out->d[g] = Q::HalfToFloat(Q::GatherDword(rows, g, off + offsetof(B, d)));
    }
  }
};

template <TileLanesTrait Q>
struct IQ4_NL {
  static constexpr int kOffset = Q::kSignedOffset;
  using Decoded = legacy::Decoded<Q, true>;
  [[gnu::always_inline]] static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockIQ4_NL;
    const int64_t off = sizeof(B) * b;
    const auto table = Q::SignedTable(kIQ4NLValues);
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeNibbles<Q>(rows, g, off + offsetof(B, qs), out);
      LookUpSigned<Q>(table, g, out);
      KeepMagnitudes<Q>(g, out);
      out->d[g] = Q::HalfToFloat(Q::GatherDword(rows, g, off + offsetof(B, d)));
    }
  }
};

template <TileLanesTrait Q>
struct MXFP4 {
  static constexpr int kOffset = Q::kSignedOffset;
  using Decoded = legacy::Decoded<Q, true>;
  [[gnu::always_inline]] static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockMXFP4;
    const int64_t off = sizeof(B) * b;
    const auto table = Q::SignedTable(kMxfp4Values);
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeNibbles<Q>(rows, g, off + offsetof(B, qs), out);
      LookUpSigned<Q>(table, g, out);
      KeepMagnitudes<Q>(g, out);
      out->d[g] = Q::E8M0Half(Q::GatherDword(rows, g, off + offsetof(B, e)));
    }
  }
};

template <TileLanesTrait Q>
struct Q4_1 {
  static constexpr int kOffset = 0;
  using Decoded = legacy::Decoded<Q, false>;
  [[gnu::always_inline]] static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ4_1;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeNibbles<Q>(rows, g, off + offsetof(B, qs), out);
      const auto dm = Q::GatherDword(rows, g, off + offsetof(B, d));  // d | m << 16
      out->d[g] = Q::HalfToFloat(dm);
      out->m[g] = Q::template HalfToFloat<true>(dm);
    }
  }
};

template <TileLanesTrait Q>
struct Q5_1 {
  static constexpr int kOffset = 0;
  using Decoded = legacy::Decoded<Q, false>;
  [[gnu::always_inline]] static void Decode(const typename Q::Rows& rows, int64_t b, Decoded* out) {
    using B = BlockQ5_1;
    const int64_t off = sizeof(B) * b;
    for (int g = 0; g < Q::kGroups; ++g) {
      DecodeNibbles<Q>(rows, g, off + offsetof(B, qs), out);
      AddHighBits<Q>(Q::GatherDword(rows, g, off + offsetof(B, qh)), g, out);
      const auto dm = Q::GatherDword(rows, g, off + offsetof(B, d));  // d | m << 16
      out->d[g] = Q::HalfToFloat(dm);
      out->m[g] = Q::template HalfToFloat<true>(dm);
    }
  }
};

// Integer block sums sum_i w_i a_i (exact, so the grouping is free) for NT activation rows and
// every group. With fewer than two sums in flight, two chains hide the dot product's latency.
template <TileLanesTrait Q, class W, int NT>
inline void BlockSums(const typename W::Decoded& dec, const QuantizedActivations& acts, int64_t b,
                      int64_t t0, typename Q::VI (&isum)[NT][Q::kGroups]) {
  using VI = typename Q::VI;
  constexpr int kChains = NT * Q::kGroups < 2 ? 2 : 1;
  const int8_t* qs[NT];
  VI part[NT][Q::kGroups][kChains];
  for (int t = 0; t < NT; ++t) {
    qs[t] = acts.qs + (t0 + t) * acts.qs_stride + 32 * b;
    const VI init = W::kOffset == 0
                        ? Q::Zero()
                        : Q::Set1(-W::kOffset * acts.sum32[(t0 + t) * acts.sum32_stride + b]);
    for (int g = 0; g < Q::kGroups; ++g) {
      part[t][g][0] = init;
      for (int c = 1; c < kChains; ++c) part[t][g][c] = Q::Zero();
    }
  }
  for (int k = 0; k < 8; k += 2) {
    for (int t = 0; t < NT; ++t) {
      const VI a0 = Q::BroadcastDword(qs[t] + 4 * k), a1 = Q::BroadcastDword(qs[t] + 4 * k + 4);
      for (int g = 0; g < Q::kGroups; ++g) {
        VI& p = part[t][g][(k / 2) % kChains];
        p = DotSlots<Q>(p, dec, g, k, a0, a1);
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    for (int g = 0; g < Q::kGroups; ++g) {
      isum[t][g] = part[t][g][0];
      for (int c = 1; c < kChains; ++c) isum[t][g] = Q::Add(isum[t][g], part[t][g][c]);
    }
  }
}

// Q8_0 activations: acc = fma(d_w * d_a, float(sum), acc); Q8_1 (kMin) then
// acc = fma(m_w, s_a, acc).
template <TileLanesTrait Q, class W, bool kMin>
struct Family : W {
  static constexpr int kBlockValues = 32;
  static constexpr int kChunkBlocks = 8;
  using Decoded = typename W::Decoded;
  template <int NT>
  static void Accumulate(const Decoded& dec, const QuantizedActivations& acts, int64_t b,
                         int64_t t0, typename Q::F::V (&acc)[NT][Q::kGroups]) {
    using F = typename Q::F;
    typename Q::VI isum[NT][Q::kGroups];
    BlockSums<Q, W, NT>(dec, acts, b, t0, isum);
    for (int t = 0; t < NT; ++t) {
      const int64_t i = (t0 + t) * acts.d_stride + b;
      const auto da = F::Set1(acts.d[i]);
      for (int g = 0; g < Q::kGroups; ++g) {
        acc[t][g] = F::MulAdd(F::Mul(dec.d[g], da), Q::ToFloat(isum[t][g]), acc[t][g]);
        if constexpr (kMin) acc[t][g] = F::MulAdd(dec.m[g], F::Set1(acts.s[i]), acc[t][g]);
      }
    }
  }
};

}  // namespace tandem::kernels::simd::legacy

// Inside an ISA namespace whose lane trait is named TileLanes: defines its MatMulTile<Name> for
// the 32-value block types.
#define TANDEM_SIMD_LEGACY_TILE(Name, kMin)                   \
  TANDEM_DEFINE_QUANT_TILE(                                   \
      Name,                                                   \
      ::tandem::kernels::simd::RunQuantTile<                  \
          TileLanes, ::tandem::kernels::simd::legacy::Family< \
                         TileLanes, ::tandem::kernels::simd::legacy::Name<TileLanes>, kMin>>)
#define TANDEM_SIMD_LEGACY_Q8_0_TILE(Name) TANDEM_SIMD_LEGACY_TILE(Name, false)
#define TANDEM_SIMD_LEGACY_Q8_1_TILE(Name) TANDEM_SIMD_LEGACY_TILE(Name, true)
#define TANDEM_SIMD_DEFINE_LEGACY_TILES                  \
  TANDEM_MATMUL_Q8_0_TILES(TANDEM_SIMD_LEGACY_Q8_0_TILE) \
  TANDEM_MATMUL_Q8_1_TILES(TANDEM_SIMD_LEGACY_Q8_1_TILE)
