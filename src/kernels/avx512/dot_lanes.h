// The AVX-512 integer-lane trait for the quantized tiles (simd/tile_lanes.h): one group of 16
// lanes, lane r = tile row r, integer dots by VNNI (weights as unsigned bytes w + o against
// signed activations, minus o * sum(a): signed weights are biased by 128).
// Only AVX-512 translation units include this header.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "kernels/avx512/vec_avx512.h"
#include "kernels/matmul_kernel.h"
#include "kernels/simd/tile_lanes.h"

namespace tandem::kernels::avx512 {

static_assert(kTileRows == 16, "one zmm lane per tile row");

// The tile's 16 row pointers.
struct TileRows {
  explicit TileRows(const WeightTile& tile) {
    for (int r = 0; r < 16; ++r) row[r] = tile.rows[r];
  }
  const uint8_t* row[16];
};

struct TileLanes16 {
  using F = F32x16;
  using VI = __m512i;
  using Rows = TileRows;
  static constexpr int kLanes = 16;
  static constexpr int kGroups = 1;
  static constexpr int kFusedRows = 8;
  static constexpr int kChunkRows = 4;
  static constexpr bool kSignedAsMagnitude = false;
  static constexpr int kSignedOffset = 128;

  // Scalar loads rather than vpgatherqd, which is microcoded on the x86 cores this runs on.
  [[gnu::always_inline]] static VI GatherDword(const TileRows& rows, int /*g*/, int64_t offset) {
    alignas(64) int32_t v[16];
    for (int r = 0; r < 16; ++r) std::memcpy(&v[r], rows.row[r] + offset, sizeof v[r]);
    return _mm512_load_si512(v);
  }
  [[gnu::always_inline]] static void LoadTransposed(const TileRows& rows, int /*g*/, int64_t offset,
                                                    VI out[4]) {
    const VI a0 = Gather4(rows, 0, offset), a1 = Gather4(rows, 1, offset),
             a2 = Gather4(rows, 2, offset), a3 = Gather4(rows, 3, offset);
    // In 128-bit lane L, a_j holds row 4L+j; a 4x4 dword transpose per lane puts row 4L+j in
    // dword j of lane L, i.e. in zmm lane 4L+j = r.
    const VI t0 = _mm512_unpacklo_epi32(a0, a1), t1 = _mm512_unpackhi_epi32(a0, a1);
    const VI t2 = _mm512_unpacklo_epi32(a2, a3), t3 = _mm512_unpackhi_epi32(a2, a3);
    out[0] = _mm512_unpacklo_epi64(t0, t2);
    out[1] = _mm512_unpackhi_epi64(t0, t2);
    out[2] = _mm512_unpacklo_epi64(t1, t3);
    out[3] = _mm512_unpackhi_epi64(t1, t3);
  }
  [[gnu::always_inline]] static VI BroadcastDword(const int8_t* p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
  }

  static VI LoadDwords(const void* p) { return _mm512_loadu_si512(p); }

  template <bool kHigh = false>
  [[gnu::always_inline]] static __m512 HalfToFloat(VI dwords) {
    if constexpr (kHigh) dwords = _mm512_srli_epi32(dwords, 16);
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dwords));
  }
  // 2^(e - 128) for the E8M0 byte e (e < 2 gives subnormals).
  [[gnu::always_inline]] static __m512 E8M0Half(VI dwords) {
    const VI e = _mm512_and_si512(dwords, _mm512_set1_epi32(0xFF));
    const VI normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
    const VI subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
    const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
    return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, subnormal));
  }
  static __m512 ToFloat(VI v) { return _mm512_cvtepi32_ps(v); }

  static VI Zero() { return _mm512_setzero_si512(); }
  static VI Set1(int32_t c) { return _mm512_set1_epi32(c); }
  static VI Add(VI a, VI b) { return _mm512_add_epi32(a, b); }
  static VI Sub(VI a, VI b) { return _mm512_sub_epi32(a, b); }
  static VI MulLo(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
  static VI ShiftLeft(VI v, int n) { return _mm512_slli_epi32(v, static_cast<unsigned>(n)); }
  static VI ShiftRight(VI v, int n) { return _mm512_srli_epi32(v, static_cast<unsigned>(n)); }
  static VI ShiftRightArith(VI v, int n) { return _mm512_srai_epi32(v, static_cast<unsigned>(n)); }
  // 16-bit lanes (byte fields that must not cross a 16-bit boundary's mask).
  static VI ShiftLeft16(VI v, int n) { return _mm512_slli_epi16(v, static_cast<unsigned>(n)); }
  static VI ShiftRight16(VI v, int n) { return _mm512_srli_epi16(v, static_cast<unsigned>(n)); }
  static VI Bits(VI v, int shift, int mask) {
    return _mm512_and_si512(ShiftRight(v, shift), _mm512_set1_epi32(mask));
  }

  static VI And(VI a, VI b) { return _mm512_and_si512(a, b); }
  static VI Or(VI a, VI b) { return _mm512_or_si512(a, b); }
  static VI Set1Byte(int32_t c) { return _mm512_set1_epi8(static_cast<char>(c)); }
  static VI LowNibbles(VI v) { return _mm512_and_si512(v, _mm512_set1_epi8(0x0F)); }
  static VI HighNibbles(VI v) {
    return _mm512_and_si512(_mm512_srli_epi32(v, 4), _mm512_set1_epi8(0x0F));
  }
  // Bit i of each lane's low 4 bits to bit 4 of its byte i, by a 16-entry table.
  [[gnu::always_inline]] static VI SpreadHighBits(VI bits) {
    auto spread = [](int n) {
      int v = 0;
      for (int i = 0; i < 4; ++i) v |= ((n >> i) & 1) << (8 * i + 4);
      return v;
    };
    const VI table =
        _mm512_setr_epi32(spread(0), spread(1), spread(2), spread(3), spread(4), spread(5),
                          spread(6), spread(7), spread(8), spread(9), spread(10), spread(11),
                          spread(12), spread(13), spread(14), spread(15));
    return _mm512_permutexvar_epi32(bits, table);
  }
  static VI LookUp(VI table, VI index) { return _mm512_shuffle_epi8(table, index); }
  // The table biased by 128 (as unsigned bytes), in each 128-bit lane.
  [[gnu::always_inline]] static VI SignedTable(const int8_t (&table)[16]) {
    alignas(16) uint8_t biased[16];
    for (int i = 0; i < 16; ++i) biased[i] = static_cast<uint8_t>(table[i] + 128);
    return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(biased)));
  }
  static VI SignedBytes(VI raw) {
    return _mm512_xor_si512(raw, _mm512_set1_epi8(static_cast<char>(0x80)));
  }

  static VI DotPair(VI acc, VI w0, VI a0, VI w1, VI a1) {
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc, w0, a0), w1, a1);
  }

  // Partial sums (the packed tiles): VPDPBUSD adds into i32 lanes, so a partial is already its
  // i32 sum and holds a whole block; a scale multiplies it as i32.
  static constexpr bool kPartialI32 = true;
  static constexpr int DotTermsMax(int w_max) { return (1 << 30) / (4 * 128 * w_max); }
  static VI DotFirst(VI w, VI a) { return _mm512_dpbusd_epi32(_mm512_setzero_si512(), w, a); }
  static VI DotNext(VI p, VI w, VI a) { return _mm512_dpbusd_epi32(p, w, a); }
  static VI Widen(VI p) { return p; }
  static VI WidenScale(VI sc) { return sc; }
  static VI WidenScaled(VI p, VI scale) { return _mm512_mullo_epi32(p, scale); }
  static VI ByteScale(VI v, int j) {
    return _mm512_srai_epi32(_mm512_slli_epi32(v, static_cast<unsigned>(24 - 8 * j)), 24);
  }
  static VI SignedBytePair16(VI v, int lo, int hi) {
    return _mm512_or_si512(_mm512_and_si512(ByteScale(v, lo), _mm512_set1_epi32(0xFFFF)),
                           _mm512_slli_epi32(ByteScale(v, hi), 16));
  }
  static VI DotWords(VI acc, VI a, VI b) { return _mm512_dpwssd_epi32(acc, a, b); }

 private:
  // The 16 bytes at rows r, r+4, r+8, r+12 (+ offset) in the four 128-bit lanes.
  [[gnu::always_inline]] static VI Gather4(const TileRows& rows, int r, int64_t offset) {
    VI v = _mm512_castsi128_si512(Load16(rows, r, offset));
    v = _mm512_inserti32x4(v, Load16(rows, r + 4, offset), 1);
    v = _mm512_inserti32x4(v, Load16(rows, r + 8, offset), 2);
    return _mm512_inserti32x4(v, Load16(rows, r + 12, offset), 3);
  }
  [[gnu::always_inline]] static __m128i Load16(const TileRows& rows, int r, int64_t offset) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows.row[r] + offset));
  }
};
static_assert(simd::TileLanesTrait<TileLanes16>);
// The name the simd/ tile macros use.
using TileLanes = TileLanes16;

// TileLanes16 on a CPU with GFNI (kernels::GfniActive()): a byte's high nibble in one
// VGF2P8AFFINEQB, whose matrix moves bits 4..7 to 0..3 and clears the rest, instead of a shift and
// a mask. Written as assembly so that this header needs no -mgfni: the compiler could otherwise
// put GFNI into the inline functions every AVX-512 translation unit shares, and a CPU without it
// would fault; only MatMulKernelsGfni()'s tiles, read where GfniActive() holds, run this trait.
struct TileLanes16Gfni : TileLanes16 {
  [[gnu::always_inline]] static VI HighNibbles(VI v) {
    // Byte 7 - i of the matrix is output bit i's row: bit i + 4 of the input for i < 4.
    const VI high_to_low = _mm512_set1_epi64(0x1020408000000000LL);
    VI out;
    __asm__("vgf2p8affineqb $0, %2, %1, %0" : "=v"(out) : "v"(v), "v"(high_to_low));
    return out;
  }
};
static_assert(simd::TileLanesTrait<TileLanes16Gfni>);

}  // namespace tandem::kernels::avx512
