// AVX2 matmul tiles for the K-quants Q4_K, Q5_K, Q6_K (Q8_K activations).
// Lane r of group g = tile row 8g + r; see dot_lanes.h.
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"

namespace tandem::kernels::avx2 {
namespace {

// One 256-value super-block of 16 rows, as avx512's DecodedK, per group of 8 rows.
struct DecodedK {
  __m256i w[kGroups][64];
  __m256i sc[kGroups][16];
  __m256i m[kGroups][8];
  __m256 d[kGroups];
  __m256 dmin[kGroups];
};

inline __m256i Bits(__m256i v, int shift, int mask) {
  return _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(mask));
}

inline void DecodeHeaderK4(const TileRows& rows, int g, int64_t offset, DecodedK* out) {
  __m256i h[4];
  LoadTransposed(rows, g, offset, h);
  out->d[g] = HalfToFloat(h[0]);
  out->dmin[g] = HalfToFloat<true>(h[0]);
  for (int j = 0; j < 4; ++j) {
    out->sc[g][j] = Bits(h[1], 8 * j, 63);
    out->m[g][j] = Bits(h[2], 8 * j, 63);
    out->sc[g][j + 4] =
        _mm256_or_si256(Bits(h[3], 8 * j, 0xF), _mm256_slli_epi32(Bits(h[1], 8 * j + 6, 3), 4));
    out->m[g][j + 4] =
        _mm256_or_si256(Bits(h[3], 8 * j + 4, 0xF), _mm256_slli_epi32(Bits(h[2], 8 * j + 6, 3), 4));
  }
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

struct Q4_K {
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
  using Decoded = DecodedK;

  template <int NT>
  static void Accumulate(const DecodedK& dec, const QuantizedActivations& acts, int64_t b,
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
            sub[g] = DotPair(sub[g], dec.w[g][slot], a0, dec.w[g][slot + 1], a1);
          }
        }
        for (int g = 0; g < kGroups; ++g) {
          isum[g] = _mm256_add_epi32(isum[g], _mm256_mullo_epi32(sub[g], dec.sc[g][j]));
        }
      }
      const __m256 da = _mm256_set1_ps(acts.d[(t0 + t) * acts.d_stride + b]);
      const int32_t* sum32 = acts.sum32 + (t0 + t) * acts.sum32_stride + 8 * b;
      for (int g = 0; g < kGroups; ++g) {
        acc[t][g] =
            _mm256_fmadd_ps(_mm256_mul_ps(dec.d[g], da), _mm256_cvtepi32_ps(isum[g]), acc[t][g]);
        if constexpr (W::kHasMins) {
          __m256i imin = _mm256_setzero_si256();
          for (int j = 0; j < 8; ++j) {
            imin = _mm256_add_epi32(imin,
                                    _mm256_mullo_epi32(dec.m[g][j], _mm256_set1_epi32(sum32[j])));
          }
          acc[t][g] =
              _mm256_fnmadd_ps(_mm256_mul_ps(dec.dmin[g], da), _mm256_cvtepi32_ps(imin), acc[t][g]);
        }
      }
    }
  }
};

}  // namespace

void MatMulTileQ4_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy) {
  RunQuantTile<Q8_KFamily<Q4_K>>(tile, acts, y, ldy);
}
void MatMulTileQ5_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy) {
  RunQuantTile<Q8_KFamily<Q5_K>>(tile, acts, y, ldy);
}
void MatMulTileQ6_K(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy) {
  RunQuantTile<Q8_KFamily<Q6_K>>(tile, acts, y, ldy);
}

}  // namespace tandem::kernels::avx2
