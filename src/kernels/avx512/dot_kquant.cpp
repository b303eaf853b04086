// AVX-512 VNNI matmul tiles for the Q8_K-activation types: Q2_K..Q6_K and IQ4_XS.
// Lane r = tile row r; see dot_lanes.h.

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

// One 256-value super-block of 16 rows. w[k] lane r = row r's elements 4k..4k+3 as unsigned
// bytes (weight + offset); sc[j], m[j] = sub-block j's scale and min (sub-blocks of 32 for
// Q4_K/Q5_K/IQ4_XS, of 16 for Q2_K/Q3_K/Q6_K); d, dmin = super-scales.
struct DecodedK {
  __m512i w[64];
  __m512i sc[16];
  __m512i m[16];
  __m512 d;
  __m512 dmin;
};

inline __m512i Bits(__m512i v, int shift, int mask) {
  return _mm512_and_si512(_mm512_srli_epi32(v, shift), _mm512_set1_epi32(mask));
}

// Q4_K/Q5_K header (d, dmin, 12 bytes of 6-bit scales and mins) at `offset`.
inline void DecodeHeaderK4(const TileRows& rows, int64_t offset, DecodedK* out) {
  __m512i h[4];
  LoadTransposed(rows, offset, h);
  out->d = HalfToFloat(h[0]);
  out->dmin = HalfToFloat<true>(h[0]);
  for (int j = 0; j < 4; ++j) {
    out->sc[j] = Bits(h[1], 8 * j, 63);
    out->m[j] = Bits(h[2], 8 * j, 63);
    out->sc[j + 4] =
        _mm512_or_si512(Bits(h[3], 8 * j, 0xF), _mm512_slli_epi32(Bits(h[1], 8 * j + 6, 3), 4));
    out->m[j + 4] =
        _mm512_or_si512(Bits(h[3], 8 * j + 4, 0xF), _mm512_slli_epi32(Bits(h[2], 8 * j + 6, 3), 4));
  }
}

// Q4_K/Q5_K low nibbles at `offset`: qs[32c + l] low -> element 64c + l, high -> 64c + 32 + l.
inline void DecodeNibblesK4(const TileRows& rows, int64_t offset, DecodedK* out) {
  for (int chunk = 0; chunk < 8; ++chunk) {
    __m512i q[4];
    LoadTransposed(rows, offset + 16 * chunk, q);
    const int c = chunk / 2, h = chunk % 2;
    for (int k = 0; k < 4; ++k) {
      out->w[16 * c + 4 * h + k] = LowNibbles(q[k]);
      out->w[16 * c + 8 + 4 * h + k] = HighNibbles(q[k]);
    }
  }
}

// Bit `bit` of every byte of v moved to bit 4 of that byte (other bits cleared).
inline __m512i BitToFour(__m512i v, int bit) {
  const __m512i shifted = bit <= 4 ? _mm512_slli_epi32(v, 4 - bit) : _mm512_srli_epi32(v, bit - 4);
  return _mm512_and_si512(shifted, _mm512_set1_epi8(0x10));
}

// Bit `from` of every byte of v moved to bit `to` of that byte (other bits cleared).
inline __m512i MoveBit(__m512i v, int from, int to) {
  const __m512i shifted =
      from <= to ? _mm512_slli_epi32(v, to - from) : _mm512_srli_epi32(v, from - to);
  return _mm512_and_si512(shifted, _mm512_set1_epi8(static_cast<char>(1 << to)));
}

// Byte m (0..15) of the transposed 16-byte window v, per lane.
inline __m512i ByteAt(const __m512i v[4], int m) {
  return Bits(v[m / 4], 8 * (m % 4), 0xFF);
}

// Q2_K/Q3_K low bits: qs[32n + l] bits 2j..2j+1 -> element 128n + 32j + l. Fills w with them
// and, for Q3_K (hmask at hmask_offset >= 0), adds the high bit as bit 2.
inline void DecodeTwoBits(const TileRows& rows, int64_t qs_offset, int64_t hmask_offset,
                          DecodedK* out) {
  for (int chunk = 0; chunk < 4; ++chunk) {
    const int n = chunk / 2, h = chunk % 2;  // l = 16h + 4k + i
    __m512i q[4], hm[4];
    LoadTransposed(rows, qs_offset + 16 * chunk, q);
    if (hmask_offset >= 0) LoadTransposed(rows, hmask_offset + 16 * h, hm);
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 4; ++k) {
        __m512i v = _mm512_and_si512(_mm512_srli_epi32(q[k], 2 * j), _mm512_set1_epi8(3));
        if (hmask_offset >= 0) v = _mm512_or_si512(v, MoveBit(hm[k], 4 * n + j, 2));
        out->w[32 * n + 8 * j + 4 * h + k] = v;
      }
    }
  }
}

struct Q2_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 84 * b;
    __m512i s[4];
    LoadTransposed(rows, off, s);
    for (int k = 0; k < 16; ++k) {
      out->sc[k] = Bits(s[k / 4], 8 * (k % 4), 0xF);
      out->m[k] = Bits(s[k / 4], 8 * (k % 4) + 4, 0xF);
    }
    DecodeTwoBits(rows, off + 16, -1, out);
    const __m512i dm = GatherDword(rows, off + 80);
    out->d = HalfToFloat(dm);
    out->dmin = HalfToFloat<true>(dm);
  }
};

struct Q3_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 4;
  static constexpr bool kHasMins = false;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 110 * b;
    DecodeTwoBits(rows, off + 32, off, out);
    // Bytes 94..109: two bytes of qs, the 12 scale bytes (window bytes 2..13) and d (14..15).
    __m512i win[4];
    LoadTransposed(rows, off + 94, win);
    for (int k = 0; k < 16; ++k) {
      const __m512i low =
          k < 8 ? Bits(ByteAt(win, 2 + k), 0, 0xF) : Bits(ByteAt(win, k - 6), 4, 0xF);
      const __m512i high = Bits(ByteAt(win, 10 + k % 4), 2 * (k / 4), 3);
      out->sc[k] =
          _mm512_sub_epi32(_mm512_or_si512(low, _mm512_slli_epi32(high, 4)), _mm512_set1_epi32(32));
    }
    out->d = HalfToFloat<true>(win[3]);
  }
};

struct IQ4_XS {
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 128;
  static constexpr bool kHasMins = false;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 136 * b;
    __m512i h[4];
    LoadTransposed(rows, off, h);  // d | scales_h << 16, scales_l[0..3], then qs
    out->d = HalfToFloat(h[0]);
    for (int ib = 0; ib < 8; ++ib) {
      const __m512i low = Bits(h[1], 8 * (ib / 2) + 4 * (ib % 2), 0xF);
      const __m512i high = Bits(h[0], 16 + 2 * ib, 3);
      out->sc[ib] =
          _mm512_sub_epi32(_mm512_or_si512(low, _mm512_slli_epi32(high, 4)), _mm512_set1_epi32(32));
    }
    alignas(16) uint8_t biased[16];
    for (int i = 0; i < 16; ++i) biased[i] = static_cast<uint8_t>(kIQ4NLValues[i] + 128);
    const __m512i table =
        _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(biased)));
    for (int ib = 0; ib < 8; ++ib) {  // qs[16ib + j]: low -> 32ib + j, high -> 32ib + 16 + j
      __m512i q[4];
      LoadTransposed(rows, off + 8 + 16 * ib, q);
      for (int k = 0; k < 4; ++k) {
        out->w[8 * ib + k] = _mm512_shuffle_epi8(table, LowNibbles(q[k]));
        out->w[8 * ib + 4 + k] = _mm512_shuffle_epi8(table, HighNibbles(q[k]));
      }
    }
  }
};

struct Q4_K {
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 144 * b;
    DecodeHeaderK4(rows, off, out);
    DecodeNibblesK4(rows, off + 16, out);
  }
};

struct Q5_K {
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 176 * b;
    DecodeHeaderK4(rows, off, out);
    DecodeNibblesK4(rows, off + 48, out);
    for (int h = 0; h < 2; ++h) {  // qh[16h + 4k + i] holds the fifth bits of l = 16h + 4k + i
      __m512i qh[4];
      LoadTransposed(rows, off + 16 + 16 * h, qh);
      for (int c = 0; c < 4; ++c) {
        for (int k = 0; k < 4; ++k) {
          __m512i& lo = out->w[16 * c + 4 * h + k];
          __m512i& hi = out->w[16 * c + 8 + 4 * h + k];
          lo = _mm512_or_si512(lo, BitToFour(qh[k], 2 * c));
          hi = _mm512_or_si512(hi, BitToFour(qh[k], 2 * c + 1));
        }
      }
    }
  }
};

struct Q6_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 32;
  static constexpr bool kHasMins = false;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 210 * b;
    // Element 128n + 32k + l: low bits in ql[64n + 32(k&1) + l] (high nibble if k >= 2),
    // high bits (qh[32n + l] >> 2k) & 3.
    for (int n = 0; n < 2; ++n) {
      for (int hc = 0; hc < 2; ++hc) {  // l / 16
        __m512i qh[4];
        LoadTransposed(rows, off + 128 + 16 * (2 * n + hc), qh);
        for (int kp = 0; kp < 2; ++kp) {  // k & 1
          __m512i ql[4];
          LoadTransposed(rows, off + 16 * (4 * n + 2 * kp + hc), ql);
          for (int k = kp; k < 4; k += 2) {
            for (int i = 0; i < 4; ++i) {
              const __m512i lo = k < 2 ? LowNibbles(ql[i]) : HighNibbles(ql[i]);
              const __m512i shifted = 2 * k <= 4 ? _mm512_slli_epi32(qh[i], 4 - 2 * k)
                                                 : _mm512_srli_epi32(qh[i], 2 * k - 4);
              const __m512i hi = _mm512_and_si512(shifted, _mm512_set1_epi8(0x30));
              out->w[32 * n + 8 * k + 4 * hc + i] = _mm512_or_si512(lo, hi);
            }
          }
        }
      }
    }
    __m512i s[4];
    LoadTransposed(rows, off + 192, s);
    for (int k = 0; k < 16; ++k) {
      out->sc[k] = _mm512_srai_epi32(_mm512_slli_epi32(s[k / 4], 24 - 8 * (k % 4)), 24);
    }
    out->d = HalfToFloat<true>(GatherDword(rows, off + 206));
  }
};

// acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} w_i a_i), acc)
//     [; acc = fma(-(dmin * d_a), float(sum_j m_j * bsum_j), acc)].
template <class W>
struct Q8_KFamily : W {
  static constexpr int kBlockValues = 256;
  static constexpr int kChunkBlocks = 1;
  using Decoded = DecodedK;

  template <int NT>
  static void Accumulate(const DecodedK& dec, const QuantizedActivations& acts, int64_t b,
                         int64_t t0, __m512 acc[NT]) {
    constexpr int kSubs = 256 / W::kSubBlock, kSlots = W::kSubBlock / 4;
    const int8_t* qs[NT];
    const int32_t* sums[NT];
    __m512i isum[NT];
    for (int t = 0; t < NT; ++t) {
      qs[t] = acts.qs + (t0 + t) * acts.qs_stride + 256 * b;
      sums[t] = W::kSubBlock == 16 ? acts.sum16 + (t0 + t) * acts.sum16_stride + 16 * b
                                   : acts.sum32 + (t0 + t) * acts.sum32_stride + 8 * b;
      isum[t] = _mm512_setzero_si512();
    }
    for (int j = 0; j < kSubs; ++j) {
      __m512i sub[NT];
      for (int t = 0; t < NT; ++t) {
        sub[t] =
            W::kOffset == 0 ? _mm512_setzero_si512() : _mm512_set1_epi32(-W::kOffset * sums[t][j]);
      }
      for (int s = 0; s < kSlots; ++s) {
        const int slot = j * kSlots + s;
        for (int t = 0; t < NT; ++t)
          sub[t] = Dot(sub[t], dec.w[slot], BroadcastDword(qs[t] + 4 * slot));
      }
      for (int t = 0; t < NT; ++t)
        isum[t] = _mm512_add_epi32(isum[t], _mm512_mullo_epi32(sub[t], dec.sc[j]));
    }
    for (int t = 0; t < NT; ++t) {
      const __m512 da = _mm512_set1_ps(acts.d[(t0 + t) * acts.d_stride + b]);
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(dec.d, da), _mm512_cvtepi32_ps(isum[t]), acc[t]);
      if constexpr (W::kHasMins) {
        __m512i imin = _mm512_setzero_si512();
        for (int j = 0; j < kSubs; ++j) {
          imin =
              _mm512_add_epi32(imin, _mm512_mullo_epi32(dec.m[j], _mm512_set1_epi32(sums[t][j])));
        }
        acc[t] = _mm512_fnmadd_ps(_mm512_mul_ps(dec.dmin, da), _mm512_cvtepi32_ps(imin), acc[t]);
      }
    }
  }
};

}  // namespace

#define TANDEM_Q8_K_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, RunQuantTile<Q8_KFamily<Name>>)
TANDEM_MATMUL_Q8_K_TILES(TANDEM_Q8_K_TILE)

}  // namespace tandem::kernels::avx512
