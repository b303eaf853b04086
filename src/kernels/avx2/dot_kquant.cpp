// AVX2 matmul tiles for the Q8_K-activation types: Q2_K..Q6_K and IQ4_XS.
// Lane r of group g = tile row 8g + r; see dot_lanes.h.
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"
#include "tensor/blocks.h"

namespace tandem::kernels::avx2 {
namespace {

// One 256-value super-block of 16 rows, as avx512's DecodedK, per group of 8 rows.
struct DecodedK {
  __m256i w[kGroups][64];
  __m256i sc[kGroups][16];
  __m256i m[kGroups][16];
  __m256 d[kGroups];
  __m256 dmin[kGroups];
};

// For signed weights (IQ4_XS): w holds the signed values and w_abs their magnitudes.
struct DecodedKSigned : DecodedK {
  __m256i w_abs[kGroups][64];
};

inline void DecodeHeaderK4(const TileRows& rows, int g, int64_t offset, DecodedK* out) {
  __m256i h[4];
  LoadTransposed(rows, g, offset, h);
  out->d[g] = HalfToFloat(h[0]);
  out->dmin[g] = HalfToFloat<true>(h[0]);
  UnpackScaleMinK4(h[1], h[2], h[3], out->sc[g], out->m[g]);
}

inline void DecodeNibblesK4(const TileRows& rows, int g, int64_t offset, DecodedK* out) {
  for (int chunk = 0; chunk < 8; ++chunk) {
    __m256i q[4];
    LoadTransposed(rows, g, offset + 16 * chunk, q);
    const int c = chunk / 2, h = chunk % 2;
    for (int k = 0; k < 4; ++k) {
      out->w[g][16 * c + 4 * h + k] = LowNibbles(q[k]);
      out->w[g][16 * c + 8 + 4 * h + k] = HighNibbles(q[k]);
    }
  }
}

// Bit `bit` of every byte of v moved to bit 4 of that byte (other bits cleared).
inline __m256i BitToFour(__m256i v, int bit) {
  const __m256i shifted = bit <= 4 ? _mm256_slli_epi32(v, 4 - bit) : _mm256_srli_epi32(v, bit - 4);
  return _mm256_and_si256(shifted, _mm256_set1_epi8(0x10));
}

// Bit `from` of every byte of v moved to bit `to` of that byte (other bits cleared).
inline __m256i MoveBit(__m256i v, int from, int to) {
  const __m256i shifted =
      from <= to ? _mm256_slli_epi32(v, to - from) : _mm256_srli_epi32(v, from - to);
  return _mm256_and_si256(shifted, _mm256_set1_epi8(static_cast<char>(1 << to)));
}

// Byte m (0..15) of the transposed 16-byte window v, per lane.
inline __m256i ByteAt(const __m256i v[4], int m) {
  return Bits(v[m / 4], 8 * (m % 4), 0xFF);
}

// Q2_K/Q3_K low bits (and for Q3_K, hmask_offset >= 0, the high bit as bit 2); see avx512.
inline void DecodeTwoBits(const TileRows& rows, int g, int64_t qs_offset, int64_t hmask_offset,
                          DecodedK* out) {
  for (int chunk = 0; chunk < 4; ++chunk) {
    const int n = chunk / 2, h = chunk % 2;
    __m256i q[4], hm[4];
    LoadTransposed(rows, g, qs_offset + 16 * chunk, q);
    if (hmask_offset >= 0) LoadTransposed(rows, g, hmask_offset + 16 * h, hm);
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 4; ++k) {
        __m256i v = _mm256_and_si256(_mm256_srli_epi32(q[k], 2 * j), _mm256_set1_epi8(3));
        if (hmask_offset >= 0) v = _mm256_or_si256(v, MoveBit(hm[k], 4 * n + j, 2));
        out->w[g][32 * n + 8 * j + 4 * h + k] = v;
      }
    }
  }
}

struct Q2_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  static constexpr bool kSigned = false;
  using Decoded = DecodedK;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 84 * b;
    for (int g = 0; g < kGroups; ++g) {
      __m256i s[4];
      LoadTransposed(rows, g, off, s);
      for (int k = 0; k < 16; ++k) {
        out->sc[g][k] = Bits(s[k / 4], 8 * (k % 4), 0xF);
        out->m[g][k] = Bits(s[k / 4], 8 * (k % 4) + 4, 0xF);
      }
      DecodeTwoBits(rows, g, off + 16, -1, out);
      const __m256i dm = GatherDword(rows, g, off + 80);
      out->d[g] = HalfToFloat(dm);
      out->dmin[g] = HalfToFloat<true>(dm);
    }
  }
};

struct Q3_K {
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 4;
  static constexpr bool kHasMins = false;
  static constexpr bool kSigned = false;
  using Decoded = DecodedK;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 110 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeTwoBits(rows, g, off + 32, off, out);
      __m256i win[4];  // bytes 94..109: qs tail, the 12 scale bytes (2..13) and d (14..15)
      LoadTransposed(rows, g, off + 94, win);
      for (int k = 0; k < 16; ++k) {
        const __m256i low =
            k < 8 ? Bits(ByteAt(win, 2 + k), 0, 0xF) : Bits(ByteAt(win, k - 6), 4, 0xF);
        const __m256i high = Bits(ByteAt(win, 10 + k % 4), 2 * (k / 4), 3);
        out->sc[g][k] = _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)),
                                         _mm256_set1_epi32(32));
      }
      out->d[g] = HalfToFloat<true>(win[3]);
    }
  }
};

struct IQ4_XS {
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = false;
  static constexpr bool kSigned = true;
  using Decoded = DecodedKSigned;
  static void Decode(const TileRows& rows, int64_t b, DecodedKSigned* out) {
    const int64_t off = 136 * b;
    const __m256i table = _mm256_broadcastsi128_si256(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues)));
    for (int g = 0; g < kGroups; ++g) {
      __m256i h[4];
      LoadTransposed(rows, g, off, h);  // d | scales_h << 16, scales_l[0..3], then qs
      out->d[g] = HalfToFloat(h[0]);
      for (int ib = 0; ib < 8; ++ib) {
        const __m256i low = Bits(h[1], 8 * (ib / 2) + 4 * (ib % 2), 0xF);
        const __m256i high = Bits(h[0], 16 + 2 * ib, 3);
        out->sc[g][ib] = _mm256_sub_epi32(_mm256_or_si256(low, _mm256_slli_epi32(high, 4)),
                                          _mm256_set1_epi32(32));
      }
      for (int ib = 0; ib < 8; ++ib) {
        __m256i q[4];
        LoadTransposed(rows, g, off + 8 + 16 * ib, q);
        for (int k = 0; k < 4; ++k) {
          out->w[g][8 * ib + k] = _mm256_shuffle_epi8(table, LowNibbles(q[k]));
          out->w[g][8 * ib + 4 + k] = _mm256_shuffle_epi8(table, HighNibbles(q[k]));
        }
      }
      for (int k = 0; k < 64; ++k) out->w_abs[g][k] = _mm256_abs_epi8(out->w[g][k]);
    }
  }
};

struct Q4_K {
  static constexpr bool kSigned = false;
  using Decoded = DecodedK;
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 144 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeHeaderK4(rows, g, off, out);
      DecodeNibblesK4(rows, g, off + 16, out);
    }
  }
};

struct Q5_K {
  static constexpr bool kSigned = false;
  using Decoded = DecodedK;
  static constexpr int kSubBlock = 32;
  static constexpr int kOffset = 0;
  static constexpr bool kHasMins = true;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 176 * b;
    for (int g = 0; g < kGroups; ++g) {
      DecodeHeaderK4(rows, g, off, out);
      DecodeNibblesK4(rows, g, off + 48, out);
      for (int h = 0; h < 2; ++h) {
        __m256i qh[4];
        LoadTransposed(rows, g, off + 16 + 16 * h, qh);
        for (int c = 0; c < 4; ++c) {
          for (int k = 0; k < 4; ++k) {
            __m256i& lo = out->w[g][16 * c + 4 * h + k];
            __m256i& hi = out->w[g][16 * c + 8 + 4 * h + k];
            lo = _mm256_or_si256(lo, BitToFour(qh[k], 2 * c));
            hi = _mm256_or_si256(hi, BitToFour(qh[k], 2 * c + 1));
          }
        }
      }
    }
  }
};

struct Q6_K {
  static constexpr bool kSigned = false;
  using Decoded = DecodedK;
  static constexpr int kSubBlock = 16;
  static constexpr int kOffset = 32;
  static constexpr bool kHasMins = false;
  static void Decode(const TileRows& rows, int64_t b, DecodedK* out) {
    const int64_t off = 210 * b;
    for (int g = 0; g < kGroups; ++g) {
      for (int n = 0; n < 2; ++n) {
        for (int hc = 0; hc < 2; ++hc) {
          __m256i qh[4];
          LoadTransposed(rows, g, off + 128 + 16 * (2 * n + hc), qh);
          for (int kp = 0; kp < 2; ++kp) {
            __m256i ql[4];
            LoadTransposed(rows, g, off + 16 * (4 * n + 2 * kp + hc), ql);
            for (int k = kp; k < 4; k += 2) {
              for (int i = 0; i < 4; ++i) {
                const __m256i lo = k < 2 ? LowNibbles(ql[i]) : HighNibbles(ql[i]);
                const __m256i shifted = 2 * k <= 4 ? _mm256_slli_epi32(qh[i], 4 - 2 * k)
                                                   : _mm256_srli_epi32(qh[i], 2 * k - 4);
                const __m256i hi = _mm256_and_si256(shifted, _mm256_set1_epi8(0x30));
                out->w[g][32 * n + 8 * k + 4 * hc + i] = _mm256_or_si256(lo, hi);
              }
            }
          }
        }
      }
      __m256i s[4];
      LoadTransposed(rows, g, off + 192, s);
      for (int k = 0; k < 16; ++k) {
        out->sc[g][k] = _mm256_srai_epi32(_mm256_slli_epi32(s[k / 4], 24 - 8 * (k % 4)), 24);
      }
      out->d[g] = HalfToFloat<true>(GatherDword(rows, g, off + 206));
    }
  }
};

// acc = fma(d * d_a, float(sum_j sc_j * sum_{i in j} w_i a_i), acc)
//     [; acc = fma(-(dmin * d_a), float(sum_j m_j * bsum_j), acc)].
template <class W>
struct Q8_KFamily : W {
  static constexpr int kBlockValues = 256;
  static constexpr int kChunkBlocks = 1;
  using Decoded = typename W::Decoded;

  template <int NT>
  static void Accumulate(const Decoded& dec, const QuantizedActivations& acts, int64_t b,
                         int64_t t0, __m256 acc[NT][kGroups]) {
    constexpr int kSubs = 256 / W::kSubBlock, kSlots = W::kSubBlock / 4;
    for (int t = 0; t < NT; ++t) {
      const int8_t* qs = acts.qs + (t0 + t) * acts.qs_stride + 256 * b;
      const int32_t* sums = W::kSubBlock == 16 ? acts.sum16 + (t0 + t) * acts.sum16_stride + 16 * b
                                               : acts.sum32 + (t0 + t) * acts.sum32_stride + 8 * b;
      __m256i isum[kGroups] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
      for (int j = 0; j < kSubs; ++j) {
        const __m256i init =
            W::kOffset == 0 ? _mm256_setzero_si256() : _mm256_set1_epi32(-W::kOffset * sums[j]);
        __m256i sub[kGroups] = {init, init};
        for (int s = 0; s < kSlots; s += 2) {
          const int slot = j * kSlots + s;
          const __m256i a0 = BroadcastDword(qs + 4 * slot), a1 = BroadcastDword(qs + 4 * slot + 4);
          for (int g = 0; g < kGroups; ++g) {
            if constexpr (W::kSigned) {
              sub[g] = DotSigned(sub[g], dec.w_abs[g][slot], dec.w[g][slot], a0);
              sub[g] = DotSigned(sub[g], dec.w_abs[g][slot + 1], dec.w[g][slot + 1], a1);
            } else {
              sub[g] = DotPair(sub[g], dec.w[g][slot], a0, dec.w[g][slot + 1], a1);
            }
          }
        }
        for (int g = 0; g < kGroups; ++g) {
          isum[g] = _mm256_add_epi32(isum[g], _mm256_mullo_epi32(sub[g], dec.sc[g][j]));
        }
      }
      const __m256 da = _mm256_set1_ps(acts.d[(t0 + t) * acts.d_stride + b]);
      for (int g = 0; g < kGroups; ++g) {
        acc[t][g] =
            _mm256_fmadd_ps(_mm256_mul_ps(dec.d[g], da), _mm256_cvtepi32_ps(isum[g]), acc[t][g]);
        if constexpr (W::kHasMins) {
          __m256i imin = _mm256_setzero_si256();
          for (int j = 0; j < kSubs; ++j) {
            imin =
                _mm256_add_epi32(imin, _mm256_mullo_epi32(dec.m[g][j], _mm256_set1_epi32(sums[j])));
          }
          acc[t][g] =
              _mm256_fnmadd_ps(_mm256_mul_ps(dec.dmin[g], da), _mm256_cvtepi32_ps(imin), acc[t][g]);
        }
      }
    }
  }
};

}  // namespace

#define TANDEM_Q8_K_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, RunQuantTile<Q8_KFamily<Name>>)
TANDEM_MATMUL_Q8_K_TILES(TANDEM_Q8_K_TILE)

}  // namespace tandem::kernels::avx2
