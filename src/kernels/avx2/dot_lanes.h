// The AVX2 integer-lane trait for the quantized tiles (simd/tile_lanes.h): two groups of 8
// lanes, lane r of group g = tile row 8g + r, integer dots without VNNI (maddubs: signed weights
// keep their sign, with their magnitudes beside them).
// Only AVX2 translation units include this header.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx2/vec_avx2.h"
#include "kernels/matmul_kernel.h"
#include "kernels/simd/tile_lanes.h"

namespace tandem::kernels::avx2 {

struct TileRows {
  explicit TileRows(const WeightTile& tile) {
    for (int r = 0; r < kTileRows; ++r) row[r] = tile.rows[r];
  }
  const uint8_t* row[kTileRows];
};

struct TileLanes8 {
  using F = F32x8;
  using VI = __m256i;
  using Rows = TileRows;
  static constexpr int kLanes = 8;
  static constexpr int kGroups = kTileRows / 8;
  static constexpr int kFusedRows = 2;
  static constexpr int kChunkRows = 2;
  static constexpr bool kSignedAsMagnitude = true;
  static constexpr int kSignedOffset = 0;

  [[gnu::always_inline]] static VI GatherDword(const TileRows& rows, int g, int64_t offset) {
    alignas(32) int32_t v[8];
    for (int r = 0; r < 8; ++r) std::memcpy(&v[r], rows.row[8 * g + r] + offset, sizeof v[r]);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(v));
  }
  [[gnu::always_inline]] static void LoadTransposed(const TileRows& rows, int g, int64_t offset,
                                                    VI out[4]) {
    const VI a0 = Pair(rows, 8 * g, offset), a1 = Pair(rows, 8 * g + 1, offset),
             a2 = Pair(rows, 8 * g + 2, offset), a3 = Pair(rows, 8 * g + 3, offset);
    const VI t0 = _mm256_unpacklo_epi32(a0, a1), t1 = _mm256_unpackhi_epi32(a0, a1);
    const VI t2 = _mm256_unpacklo_epi32(a2, a3), t3 = _mm256_unpackhi_epi32(a2, a3);
    out[0] = _mm256_unpacklo_epi64(t0, t2);
    out[1] = _mm256_unpackhi_epi64(t0, t2);
    out[2] = _mm256_unpacklo_epi64(t1, t3);
    out[3] = _mm256_unpackhi_epi64(t1, t3);
  }
  [[gnu::always_inline]] static VI BroadcastDword(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
  }

  static VI LoadDwords(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

  template <bool kHigh = false>
  [[gnu::always_inline]] static __m256 HalfToFloat(VI dwords) {
    if constexpr (kHigh) {
      dwords = _mm256_srli_epi32(dwords, 16);
    } else {
      dwords = _mm256_and_si256(dwords, _mm256_set1_epi32(0xFFFF));
    }
    // Pack the 8 low halves into 128 bits: packus keeps 0..65535 exactly.
    const VI packed = _mm256_packus_epi32(dwords, dwords);  // per 128-bit lane
    const __m128i halves = _mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08));
    return _mm256_cvtph_ps(halves);
  }
  // 2^(e - 128) for the E8M0 byte e (e < 2 gives subnormals).
  [[gnu::always_inline]] static __m256 E8M0Half(VI dwords) {
    const VI e = _mm256_and_si256(dwords, _mm256_set1_epi32(0xFF));
    const VI normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
    const VI subnormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
    const VI small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
    return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, subnormal, small));
  }
  static __m256 ToFloat(VI v) { return _mm256_cvtepi32_ps(v); }

  static VI Zero() { return _mm256_setzero_si256(); }
  static VI Set1(int32_t c) { return _mm256_set1_epi32(c); }
  static VI Add(VI a, VI b) { return _mm256_add_epi32(a, b); }
  static VI Sub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
  static VI MulLo(VI a, VI b) { return _mm256_mullo_epi32(a, b); }
  static VI ShiftLeft(VI v, int n) { return _mm256_slli_epi32(v, n); }
  static VI ShiftRight(VI v, int n) { return _mm256_srli_epi32(v, n); }
  static VI ShiftRightArith(VI v, int n) { return _mm256_srai_epi32(v, n); }
  // 16-bit lanes (byte fields that must not cross a 16-bit boundary's mask).
  static VI ShiftLeft16(VI v, int n) { return _mm256_slli_epi16(v, n); }
  static VI ShiftRight16(VI v, int n) { return _mm256_srli_epi16(v, n); }
  static VI Bits(VI v, int shift, int mask) {
    return _mm256_and_si256(_mm256_srli_epi32(v, shift), _mm256_set1_epi32(mask));
  }

  static VI And(VI a, VI b) { return _mm256_and_si256(a, b); }
  static VI Or(VI a, VI b) { return _mm256_or_si256(a, b); }
  static VI Set1Byte(int32_t c) { return _mm256_set1_epi8(static_cast<char>(c)); }
  static VI LowNibbles(VI v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0F)); }
  static VI HighNibbles(VI v) {
    return _mm256_and_si256(_mm256_srli_epi32(v, 4), _mm256_set1_epi8(0x0F));
  }
  // Multiplying the low 4 bits by 2^4 + 2^11 + 2^18 + 2^25 puts bit i at 8i + 4 with no carries.
  [[gnu::always_inline]] static VI SpreadHighBits(VI bits) {
    const VI nibble = _mm256_and_si256(bits, _mm256_set1_epi32(0xF));
    return _mm256_and_si256(_mm256_mullo_epi32(nibble, _mm256_set1_epi32(0x02040810)),
                            _mm256_set1_epi32(0x10101010));
  }
  static VI LookUp(VI table, VI index) { return _mm256_shuffle_epi8(table, index); }
  [[gnu::always_inline]] static VI SignedTable(const int8_t (&table)[16]) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(table)));
  }
  static VI SignedBytes(VI raw) { return raw; }
  static VI Abs8(VI v) { return _mm256_abs_epi8(v); }

  // Two 16-bit pair sums are added before widening: 2 * 2 * 63 * 127 < 2^15.
  static VI DotPair(VI acc, VI w0, VI a0, VI w1, VI a1) {
    const VI p = _mm256_add_epi16(_mm256_maddubs_epi16(w0, a0), _mm256_maddubs_epi16(w1, a1));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
  }
  // acc + per-lane sum of w * a for signed weights (any int8 but -128 paired with a = -128) via
  // |w| * sign(a, w).
  static VI DotSigned(VI acc, VI w_abs, VI w, VI a) {
    return _mm256_add_epi32(acc, Widen(DotSignedFirst(w_abs, w, a)));
  }

  // Partial sums (the packed tiles): maddubs's i16 pair sums, added in 16 bits while they hold
  // (DotTermsMax) and widened to i32 lanes by one madd, which can multiply by a scale on the way.
  static constexpr bool kPartialI32 = false;
  // How many DotFirst/DotNext terms of unsigned weights <= w_max against |a| <= 128 one partial
  // holds: each adds two products to a 16-bit lane.
  static constexpr int DotTermsMax(int w_max) { return 32767 / (2 * 128 * w_max); }
  static VI DotFirst(VI w, VI a) { return _mm256_maddubs_epi16(w, a); }
  static VI DotNext(VI p, VI w, VI a) { return _mm256_add_epi16(p, _mm256_maddubs_epi16(w, a)); }
  static VI DotSignedFirst(VI w_abs, VI w, VI a) {
    return _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(a, w));
  }
  static VI Widen(VI p) { return _mm256_madd_epi16(p, _mm256_set1_epi16(1)); }
  // The i32 scale lanes sc (within int16) in the form WidenScaled multiplies by.
  static VI WidenScale(VI sc) {
    return _mm256_or_si256(_mm256_and_si256(sc, _mm256_set1_epi32(0xFFFF)),
                           _mm256_slli_epi32(sc, 16));
  }
  static VI WidenScaled(VI p, VI scale) { return _mm256_madd_epi16(p, scale); }
  // Signed byte j of each lane, as a WidenScale'd scale.
  [[gnu::always_inline]] static VI ByteScale(VI v, int j) { return SignedBytePair16(v, j, j); }
  // Each lane: the int16 pair (signed byte lo, signed byte hi) of that lane: a pshufb puts each
  // byte in the high half of its 16-bit word, and an arithmetic shift brings it down.
  [[gnu::always_inline]] static VI SignedBytePair16(VI v, int lo, int hi) {
    const VI dword0 = _mm256_set1_epi32(static_cast<int32_t>(0x00800080u | (lo << 8) | (hi << 24)));
    const VI pattern =
        _mm256_add_epi8(dword0, _mm256_setr_epi8(0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0, 8, 0, 12, 0, 12,
                                                 0, 0, 0, 0, 0, 4, 0, 4, 0, 8, 0, 8, 0, 12, 0, 12));
    return _mm256_srai_epi16(_mm256_shuffle_epi8(v, pattern), 8);
  }
  // acc + the per-lane sum of the two int16 products a * b.
  static VI DotWords(VI acc, VI a, VI b) { return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b)); }

 private:
  // The 16 bytes at rows r and r+4 (+ offset) in the two 128-bit lanes.
  [[gnu::always_inline]] static VI Pair(const TileRows& rows, int r, int64_t offset) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows.row[r] + offset));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows.row[r + 4] + offset));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
  }
};
static_assert(simd::TileLanesTrait<TileLanes8>);
// The name the simd/ tile macros use.
using TileLanes = TileLanes8;

}  // namespace tandem::kernels::avx2
