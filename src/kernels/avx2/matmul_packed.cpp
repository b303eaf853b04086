// AVX2 tiles over interleaved weights (matmul_repack.h) for Q4_0 and Q8_0: lane r of a group is
// weight row r, and one 32-byte load gives all 8 rows' next 4 quants, so a block needs no
// transposition or gathers. Each block is decoded once per chunk of kActRows activation rows and
// its integer dots stay in registers.
//
// Per output element the sequence is the reference's (dot_ref.h): an exact integer block sum,
// then acc = fma(d_w * d_a, float(sum), acc) in block order, the same for every T, so results
// are bitwise equal to the row-major tiles and the scalar path.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/avx2/dot_avx2.h"

namespace tandem::kernels::avx2 {
namespace {

constexpr int kActRows = 4;               // activation rows per pass over a group's blocks
constexpr int64_t kPrefetchAhead = 1024;  // bytes ahead of the block being decoded

inline __m256i Broadcast(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm256_set1_epi32(v);
}

inline __m256i Load(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// Q4_0 group block: 8 fp16 scales, then 4 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]).
// w[j] lane r holds row r's unsigned quants of elements 4j..4j+3 (q = w + 8).
struct PackedQ4_0 {
  static constexpr int64_t kBlockBytes = 8 * 18;
  struct Block {
    __m256i w[8];
    __m256 d;
  };
  static void Decode(const uint8_t* p, Block* b) {
    b->d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    for (int k = 0; k < 4; ++k) {
      const __m256i raw = Load(p + 16 + 32 * k);
      b->w[k] = _mm256_and_si256(raw, m4);
      b->w[4 + k] = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
    }
  }
  // Exact sum_i (q_i - 8) a_i per lane. The eight 16-bit pair sums stay below 2^15:
  // 16 products of q <= 15 and |a| <= 127 are at most 30480.
  static __m256i Dot(const Block& b, const int8_t* a, int32_t sum32) {
    __m256i p = _mm256_maddubs_epi16(b.w[0], Broadcast(a));
    for (int j = 1; j < 8; ++j) {
      p = _mm256_add_epi16(p, _mm256_maddubs_epi16(b.w[j], Broadcast(a + 4 * j)));
    }
    return _mm256_add_epi32(_mm256_madd_epi16(p, _mm256_set1_epi16(1)),
                            _mm256_set1_epi32(-8 * sum32));
  }
};

// Q8_0 group block: 8 fp16 scales, then 8 x 32 bytes (chunk k lane r = row r's qs[4k..4k+3]).
struct PackedQ8_0 {
  static constexpr int64_t kBlockBytes = 8 * 34;
  struct Block {
    __m256i w[8];
    __m256i w_abs[8];
    __m256 d;
  };
  static void Decode(const uint8_t* p, Block* b) {
    b->d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    for (int k = 0; k < 8; ++k) {
      b->w[k] = Load(p + 16 + 32 * k);
      b->w_abs[k] = _mm256_abs_epi8(b->w[k]);
    }
  }
  // Exact sum_i w_i a_i per lane via |w| * sign(a, w) (activations are never -128).
  static __m256i Dot(const Block& b, const int8_t* a, int32_t) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s = _mm256_setzero_si256();
    for (int k = 0; k < 8; ++k) {
      const __m256i p =
          _mm256_maddubs_epi16(b.w_abs[k], _mm256_sign_epi8(Broadcast(a + 4 * k), b.w[k]));
      s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
    }
    return s;
  }
};

// Rows of one group against activation rows t0..t0+NT-1, stored to y (the group's column 0).
template <class K, int NT>
void GroupRows(const uint8_t* group, int64_t nb, const QuantizedActivations& acts, int64_t t0,
               int n_rows, float* y, int64_t ldy) {
  __m256 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
  const int8_t* qs = acts.qs + t0 * acts.qs_stride;
  const float* d = acts.d + t0 * acts.d_stride;
  const int32_t* sum32 = acts.sum32 + t0 * acts.sum32_stride;
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* p = group + b * K::kBlockBytes;
    for (int64_t l = 0; l < K::kBlockBytes; l += 64) {
      _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchAhead + l), _MM_HINT_T0);
    }
    typename K::Block blk;
    K::Decode(p, &blk);
    for (int t = 0; t < NT; ++t) {
      const __m256i sum =
          K::Dot(blk, qs + t * acts.qs_stride + 32 * b, sum32[t * acts.sum32_stride + b]);
      const __m256 scale = _mm256_mul_ps(blk.d, _mm256_set1_ps(d[t * acts.d_stride + b]));
      acc[t] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(sum), acc[t]);
    }
  }
  if (n_rows >= 8) {
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(y + t * ldy, acc[t]);
  } else {
    const __m256i mask =
        _mm256_cmpgt_epi32(_mm256_set1_epi32(n_rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int t = 0; t < NT; ++t) _mm256_maskstore_ps(y + t * ldy, mask, acc[t]);
  }
}

template <class K, int NT>
void GroupsPass(const PackedTile& tile, int64_t nb, const QuantizedActivations& acts, int64_t t0,
                float* y, int64_t ldy) {
  for (int g = 0; g < tile.n_groups; ++g) {
    GroupRows<K, NT>(tile.groups + g * tile.group_bytes, nb, acts, t0, tile.n_rows - kPackRows * g,
                     y + t0 * ldy + kPackRows * g, ldy);
  }
}

// Activation rows in chunks of kActRows (the tail with a narrower pass), each chunk over all the
// tile's groups: the groups stay in cache while the activations stream.
template <class K>
void RunPackedTile(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                   int64_t ldy) {
  const int64_t nb = acts.cols / 32;
  int64_t t = 0;
  for (; t + kActRows <= acts.n_rows; t += kActRows) {
    GroupsPass<K, kActRows>(tile, nb, acts, t, y, ldy);
  }
  switch (acts.n_rows - t) {
    case 1:
      GroupsPass<K, 1>(tile, nb, acts, t, y, ldy);
      break;
    case 2:
      GroupsPass<K, 2>(tile, nb, acts, t, y, ldy);
      break;
    case 3:
      GroupsPass<K, 3>(tile, nb, acts, t, y, ldy);
      break;
    default:
      break;
  }
}

}  // namespace

void MatMulPackedQ4_0(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                      int64_t ldy) {
  RunPackedTile<PackedQ4_0>(tile, acts, y, ldy);
}
void MatMulPackedQ8_0(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                      int64_t ldy) {
  RunPackedTile<PackedQ8_0>(tile, acts, y, ldy);
}

}  // namespace tandem::kernels::avx2
