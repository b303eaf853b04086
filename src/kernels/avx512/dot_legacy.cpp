// AVX-512 VNNI matmul tiles for the 32-value block types: Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4 (Q8_0
// activations) and Q4_1, Q5_1 (Q8_1 activations). Lane r = tile row r; see dot_lanes.h.

// GCC 12 reports its own _mm512_undefined_*() placeholders inside intrinsics as uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/dot_lanes.h"
#include "tensor/blocks.h"

namespace tandem::kernels::avx512 {
namespace {

// One 32-value block of 16 rows: w[k] lane r = row r's elements 4k..4k+3 as unsigned bytes
// (weight + offset); d and m = the rows' scales and mins.
struct Decoded {
  __m512i w[8];
  __m512 d;
  __m512 m;
};

// Bit 4 of each of the four bytes of a dword from the low 4 bits of the index (bit i -> byte i).
inline __m512i SpreadHighBits(__m512i bits) {
  auto spread = [](int n) {
    int v = 0;
    for (int i = 0; i < 4; ++i) v |= ((n >> i) & 1) << (8 * i + 4);
    return v;
  };
  const __m512i table = _mm512_setr_epi32(
      spread(0), spread(1), spread(2), spread(3), spread(4), spread(5), spread(6), spread(7),
      spread(8), spread(9), spread(10), spread(11), spread(12), spread(13), spread(14), spread(15));
  return _mm512_permutexvar_epi32(bits, table);
}

// Nibble blocks (qs[j]: element j low, j+16 high) at `offset`, with the fifth bits from `qh`.
inline void DecodeNibbles(const TileRows& rows, int64_t offset, Decoded* out) {
  __m512i raw[4];
  LoadTransposed(rows, offset, raw);
  for (int k = 0; k < 4; ++k) {
    out->w[k] = LowNibbles(raw[k]);
    out->w[4 + k] = HighNibbles(raw[k]);
  }
}

inline void AddHighBits(__m512i qh, Decoded* out) {
  for (int k = 0; k < 8; ++k) {
    out->w[k] = _mm512_or_si512(out->w[k], SpreadHighBits(_mm512_srli_epi32(qh, 4 * k)));
  }
}

struct Q4_0 {
  static constexpr int kOffset = 8;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 18 * b;
    DecodeNibbles(rows, off + 2, out);
    out->d = HalfToFloat(GatherDword(rows, off));
  }
};

struct Q5_0 {
  static constexpr int kOffset = 16;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 22 * b;
    DecodeNibbles(rows, off + 6, out);
    AddHighBits(GatherDword(rows, off + 2), out);
    out->d = HalfToFloat(GatherDword(rows, off));
  }
};

struct Q8_0 {
  static constexpr int kOffset = 128;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 34 * b;
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
    LoadTransposed(rows, off + 2, out->w);
    LoadTransposed(rows, off + 18, out->w + 4);
    for (int k = 0; k < 8; ++k) out->w[k] = _mm512_xor_si512(out->w[k], flip);
    out->d = HalfToFloat(GatherDword(rows, off));
  }
};

// 16-entry signed table biased by 128 (as unsigned bytes), in each 128-bit lane.
inline __m512i BiasedTable(const int8_t (&table)[16]) {
  alignas(16) uint8_t biased[16];
  for (int i = 0; i < 16; ++i) biased[i] = static_cast<uint8_t>(table[i] + 128);
  return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(biased)));
}

// Replaces each nibble code of out->w by table[code] + 128.
inline void LookUp(const int8_t (&table)[16], Decoded* out) {
  const __m512i t = BiasedTable(table);
  for (int k = 0; k < 8; ++k) out->w[k] = _mm512_shuffle_epi8(t, out->w[k]);
}

struct IQ4_NL {
  static constexpr int kOffset = 128;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 18 * b;
    DecodeNibbles(rows, off + 2, out);
    LookUp(kIQ4NLValues, out);
    out->d = HalfToFloat(GatherDword(rows, off));
  }
};

// 2^(e - 128) for the E8M0 byte e in the low 8 bits of each lane (e < 2 gives subnormals).
inline __m512 E8M0Half(__m512i dwords) {
  const __m512i e = _mm512_and_si512(dwords, _mm512_set1_epi32(0xFF));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, subnormal));
}

struct MXFP4 {
  static constexpr int kOffset = 128;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 17 * b;
    DecodeNibbles(rows, off + 1, out);
    LookUp(kMxfp4Values, out);
    out->d = E8M0Half(GatherDword(rows, off));
  }
};

struct Q4_1 {
  static constexpr int kOffset = 0;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 20 * b;
    DecodeNibbles(rows, off + 4, out);
    const __m512i dm = GatherDword(rows, off);
    out->d = HalfToFloat(dm);
    out->m = HalfToFloat<true>(dm);
  }
};

struct Q5_1 {
  static constexpr int kOffset = 0;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 24 * b;
    DecodeNibbles(rows, off + 8, out);
    AddHighBits(GatherDword(rows, off + 4), out);
    const __m512i dm = GatherDword(rows, off);
    out->d = HalfToFloat(dm);
    out->m = HalfToFloat<true>(dm);
  }
};

// Integer block sums for NT activation rows: sum_i w_i a_i (exact, so the grouping is free;
// a single row uses two chains to hide the VNNI latency).
template <int kOffset, int NT>
inline void BlockSums(const Decoded& dec, const QuantizedActivations& acts, int64_t b, int64_t t0,
                      __m512i isum[NT]) {
  constexpr int kChains = NT == 1 ? 2 : 1;
  const int8_t* qs[NT];
  __m512i part[NT][kChains];
  for (int t = 0; t < NT; ++t) {
    qs[t] = acts.qs + (t0 + t) * acts.qs_stride + 32 * b;
    part[t][0] = kOffset == 0
                     ? _mm512_setzero_si512()
                     : _mm512_set1_epi32(-kOffset * acts.sum32[(t0 + t) * acts.sum32_stride + b]);
    for (int c = 1; c < kChains; ++c) part[t][c] = _mm512_setzero_si512();
  }
  for (int k = 0; k < 8; ++k) {
    for (int t = 0; t < NT; ++t) {
      __m512i& p = part[t][k % kChains];
      p = Dot(p, dec.w[k], BroadcastDword(qs[t] + 4 * k));
    }
  }
  for (int t = 0; t < NT; ++t) {
    isum[t] = part[t][0];
    for (int c = 1; c < kChains; ++c) isum[t] = _mm512_add_epi32(isum[t], part[t][c]);
  }
}

// acc = fma(d_w * d_a, float(sum), acc).
template <class W>
struct Q8_0Family : W {
  static constexpr int kBlockValues = 32;
  static constexpr int kChunkBlocks = 8;
  using Decoded = avx512::Decoded;
  template <int NT>
  static void Accumulate(const Decoded& dec, const QuantizedActivations& acts, int64_t b,
                         int64_t t0, __m512 acc[NT]) {
    __m512i isum[NT];
    BlockSums<W::kOffset, NT>(dec, acts, b, t0, isum);
    for (int t = 0; t < NT; ++t) {
      const __m512 scale =
          _mm512_mul_ps(dec.d, _mm512_set1_ps(acts.d[(t0 + t) * acts.d_stride + b]));
      acc[t] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(isum[t]), acc[t]);
    }
  }
};

// acc = fma(d_w * d_a, float(sum), acc); acc = fma(m_w, s_a, acc).
template <class W>
struct Q8_1Family : W {
  static constexpr int kBlockValues = 32;
  static constexpr int kChunkBlocks = 8;
  using Decoded = avx512::Decoded;
  template <int NT>
  static void Accumulate(const Decoded& dec, const QuantizedActivations& acts, int64_t b,
                         int64_t t0, __m512 acc[NT]) {
    __m512i isum[NT];
    BlockSums<W::kOffset, NT>(dec, acts, b, t0, isum);
    for (int t = 0; t < NT; ++t) {
      const int64_t i = (t0 + t) * acts.d_stride + b;
      const __m512 scale = _mm512_mul_ps(dec.d, _mm512_set1_ps(acts.d[i]));
      acc[t] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(isum[t]), acc[t]);
      acc[t] = _mm512_fmadd_ps(dec.m, _mm512_set1_ps(acts.s[i]), acc[t]);
    }
  }
};

}  // namespace

#define TANDEM_Q8_0_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, RunQuantTile<Q8_0Family<Name>>)
#define TANDEM_Q8_1_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, RunQuantTile<Q8_1Family<Name>>)
TANDEM_MATMUL_Q8_0_TILES(TANDEM_Q8_0_TILE)
TANDEM_MATMUL_Q8_1_TILES(TANDEM_Q8_1_TILE)

}  // namespace tandem::kernels::avx512
