// AVX2 matmul tiles for the 32-value block types: Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4 (Q8_0
// activations) and Q4_1, Q5_1 (Q8_1 activations). Lane r of group g = tile row 8g + r; see
// dot_lanes.h.
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"
#include "tensor/blocks.h"

namespace tandem::kernels::avx2 {
namespace {

// One 32-value block of 16 rows: w[g][k] lane r = row 8g + r's elements 4k..4k+3 as unsigned
// bytes (weight + offset; for the signed types the weight, with its magnitude in w_abs); d, m =
// the rows' scales and mins.
struct Decoded {
  __m256i w[kGroups][8];
  __m256i w_abs[kGroups][8];  // Q8_0 only
  __m256 d[kGroups];
  __m256 m[kGroups];
};

// Bit 4 of each byte of a dword from the low 4 bits of `bits` (bit i -> byte i), per lane:
// multiplying by 2^4 + 2^11 + 2^18 + 2^25 puts bit i at 8i + 4 with no carries.
inline __m256i SpreadHighBits(__m256i bits) {
  const __m256i nibble = _mm256_and_si256(bits, _mm256_set1_epi32(0xF));
  return _mm256_and_si256(_mm256_mullo_epi32(nibble, _mm256_set1_epi32(0x02040810)),
                          _mm256_set1_epi32(0x10101010));
}

inline void DecodeNibbles(const TileRows& rows, int g, int64_t offset, Decoded* out) {
  __m256i raw[4];
  LoadTransposed(rows, g, offset, raw);
  for (int k = 0; k < 4; ++k) {
    out->w[g][k] = LowNibbles(raw[k]);
    out->w[g][4 + k] = HighNibbles(raw[k]);
  }
}

inline void AddHighBits(__m256i qh, int g, Decoded* out) {
  for (int k = 0; k < 8; ++k) {
    out->w[g][k] = _mm256_or_si256(out->w[g][k], SpreadHighBits(_mm256_srli_epi32(qh, 4 * k)));
  }
}

struct Q4_0 {
  static constexpr int kOffset = 8;
  static constexpr bool kSigned = false;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 18 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeNibbles(rows, g, off + 2, out);
      out->d[g] = HalfToFloat(GatherDword(rows, g, off));
    }
  }
};

struct Q5_0 {
  static constexpr int kOffset = 16;
  static constexpr bool kSigned = false;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 22 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeNibbles(rows, g, off + 6, out);
      AddHighBits(GatherDword(rows, g, off + 2), g, out);
      out->d[g] = HalfToFloat(GatherDword(rows, g, off));
    }
  }
};

struct Q8_0 {
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = true;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 34 * b;
    for (int g = 0; g < kGroups; ++g) {
      LoadTransposed(rows, g, off + 2, out->w[g]);
      LoadTransposed(rows, g, off + 18, out->w[g] + 4);
      for (int k = 0; k < 8; ++k) out->w_abs[g][k] = _mm256_abs_epi8(out->w[g][k]);
      out->d[g] = HalfToFloat(GatherDword(rows, g, off));
    }
  }
};

// Replaces each nibble code of group g by the signed table[code], with magnitudes in w_abs.
inline void LookUpSigned(const int8_t (&table)[16], int g, Decoded* out) {
  const __m256i t =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table)));
  for (int k = 0; k < 8; ++k) {
    out->w[g][k] = _mm256_shuffle_epi8(t, out->w[g][k]);
    out->w_abs[g][k] = _mm256_abs_epi8(out->w[g][k]);
  }
}

struct IQ4_NL {
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = true;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 18 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeNibbles(rows, g, off + 2, out);
      LookUpSigned(kIQ4NLValues, g, out);
      out->d[g] = HalfToFloat(GatherDword(rows, g, off));
    }
  }
};

// 2^(e - 128) for the E8M0 byte e in the low 8 bits of each lane (e < 2 gives subnormals).
inline __m256 E8M0Half(__m256i dwords) {
  const __m256i e = _mm256_and_si256(dwords, _mm256_set1_epi32(0xFF));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
  return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, small));
}

struct MXFP4 {
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = true;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 17 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeNibbles(rows, g, off + 1, out);
      LookUpSigned(kMxfp4Values, g, out);
      out->d[g] = E8M0Half(GatherDword(rows, g, off));
    }
  }
};

struct Q4_1 {
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = false;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 20 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeNibbles(rows, g, off + 4, out);
      const __m256i dm = GatherDword(rows, g, off);
      out->d[g] = HalfToFloat(dm);
      out->m[g] = HalfToFloat<true>(dm);
    }
  }
};

struct Q5_1 {
  static constexpr int kOffset = 0;
  static constexpr bool kSigned = false;
  static void Decode(const TileRows& rows, int64_t b, Decoded* out) {
    const int64_t off = 24 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeNibbles(rows, g, off + 8, out);
      AddHighBits(GatherDword(rows, g, off + 4), g, out);
      const __m256i dm = GatherDword(rows, g, off);
      out->d[g] = HalfToFloat(dm);
      out->m[g] = HalfToFloat<true>(dm);
    }
  }
};

// Integer block sums sum_i w_i a_i (exact) for NT activation rows and both groups.
template <class W, int NT>
inline void BlockSums(const Decoded& dec, const QuantizedActivations& acts, int64_t b, int64_t t0,
                      __m256i isum[NT][kGroups]) {
  for (int t = 0; t < NT; ++t) {
    const int8_t* qs = acts.qs + (t0 + t) * acts.qs_stride + 32 * b;
    const __m256i init =
        W::kOffset == 0
            ? _mm256_setzero_si256()
            : _mm256_set1_epi32(-W::kOffset * acts.sum32[(t0 + t) * acts.sum32_stride + b]);
    for (int g = 0; g < kGroups; ++g) isum[t][g] = init;
    for (int k = 0; k < 8; k += 2) {
      const __m256i a0 = BroadcastDword(qs + 4 * k), a1 = BroadcastDword(qs + 4 * k + 4);
      for (int g = 0; g < kGroups; ++g) {
        if constexpr (W::kSigned) {
          isum[t][g] = DotSigned(isum[t][g], dec.w_abs[g][k], dec.w[g][k], a0);
          isum[t][g] = DotSigned(isum[t][g], dec.w_abs[g][k + 1], dec.w[g][k + 1], a1);
        } else {
          isum[t][g] = DotPair(isum[t][g], dec.w[g][k], a0, dec.w[g][k + 1], a1);
        }
      }
    }
  }
}

// Q8_0 family: c = (d_w * d_a) * float(sum); Q8_1 family (kMin): c += m_w * s_a; acc += c.
template <class W, bool kMin>
struct Family : W {
  static constexpr int kBlockValues = 32;
  static constexpr int kChunkBlocks = 8;
  using Decoded = avx2::Decoded;
  template <int NT>
  static void Accumulate(const Decoded& dec, const QuantizedActivations& acts, int64_t b,
                         int64_t t0, __m256 acc[NT][kGroups]) {
    __m256i isum[NT][kGroups];
    BlockSums<W, NT>(dec, acts, b, t0, isum);
    for (int t = 0; t < NT; ++t) {
      const int64_t i = (t0 + t) * acts.d_stride + b;
      const __m256 da = _mm256_set1_ps(acts.d[i]);
      for (int g = 0; g < kGroups; ++g) {
        const __m256 scale = _mm256_mul_ps(dec.d[g], da);
        acc[t][g] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(isum[t][g]), acc[t][g]);
        if constexpr (kMin) {
          acc[t][g] = _mm256_fmadd_ps(dec.m[g], _mm256_set1_ps(acts.s[i]), acc[t][g]);
        }
      }
    }
  }
};

}  // namespace

#define TANDEM_Q8_0_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, RunQuantTile<Family<Name, false>>)
#define TANDEM_Q8_1_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, RunQuantTile<Family<Name, true>>)
TANDEM_MATMUL_Q8_0_TILES(TANDEM_Q8_0_TILE)
TANDEM_MATMUL_Q8_1_TILES(TANDEM_Q8_1_TILE)

}  // namespace tandem::kernels::avx2
