// The integer-lane trait the quantized row-major tiles in simd/ are written against
// (quant_tile-inl.h, dot_legacy-inl.h, dot_kquant-inl.h), once for every vector width.
//
// A tile is kTileRows weight rows; a lane trait holds them in kGroups integer vectors of
// kLanes 32-bit lanes, lane r of group g being row kLanes * g + r (avx2/dot_lanes.h: two groups
// of 8; avx512/dot_lanes.h: one of 16). Its operations are exact integer ones (loads,
// shifts, masks, byte lookups, dot products of bytes into i32 lanes) plus fp16/E8M0 scale
// widening, and it names the float trait F (vec_trait.h) the tiles accumulate in.
//
// Signed weight bytes (Q8_0, IQ4_NL, MXFP4, IQ4_XS) go one of two ways, each exact:
// - kSignedAsMagnitude (no VNNI, AVX2): the weight bytes stay signed, their magnitudes are
//   kept beside them (Q::Abs8), and Q::DotSigned(acc, |w|, w, a) multiplies |w| by a with w's
//   sign (kSignedOffset = 0);
// - otherwise (VNNI): they are biased to unsigned bytes w + 128 (SignedBytes, SignedTable), and
//   the block's sum is corrected by -128 * sum(a) like the unsigned types' offsets
//   (kSignedOffset = 128).
//
// The traits mark their multi-instruction loads [[gnu::always_inline]], and the templates their
// small decode steps and the 32-value types' Decode: GCC 12 left LoadTransposed (a class member)
// and Q4_0's DecodeNibbles (a template) out of line, where the free functions they replaced
// had been inlined (bench/README.md § Kernel choices).
#pragma once

#include <concepts>
#include <cstdint>

#include "kernels/matmul_kernel.h"
#include "kernels/simd/vec_trait.h"

namespace tandem::kernels::simd {

// clang-format off
template <class Q>
concept TileLanesTrait = requires(typename Q::VI v, const typename Q::Rows& rows, int g,
                                  int64_t offset, typename Q::VI* out, const int8_t* p,
                                  const int8_t (&table)[16], int n, int32_t c) {
  requires VecTrait<typename Q::F>;
  requires Q::kLanes == Q::F::kLanes && Q::kGroups * Q::kLanes == kTileRows;
  // Rows: the tile's row pointers (a per-ISA copy of WeightTile::rows).
  { typename Q::Rows(WeightTile{}) };
  // Activation rows per register block: up to kFusedRows rows decode each block as it is used;
  // larger batches go kChunkRows rows at a time over decoded chunks.
  requires Q::kFusedRows >= 1 && Q::kChunkRows >= 1;
  { Q::kSignedAsMagnitude } -> std::convertible_to<bool>;
  { Q::kSignedOffset } -> std::convertible_to<int>;
  // Loads: lane r = the dword at row (kLanes g + r) + offset; the transposed 16 bytes
  // (out[k] lane r = bytes 4k..4k+3 of that row); the 4 activation bytes at p in every lane.
  { Q::GatherDword(rows, g, offset) } -> std::same_as<typename Q::VI>;
  Q::LoadTransposed(rows, g, offset, out);
  { Q::BroadcastDword(p) } -> std::same_as<typename Q::VI>;
  // kLanes dwords at p (unaligned): lane r = dword r (a packed group's chunk, packed_layout.h).
  { Q::LoadDwords(p) } -> std::same_as<typename Q::VI>;
  // fp16 in the low (kHigh: high) half of each lane, and E8M0 in its low byte, as f32.
  { Q::template HalfToFloat<false>(v) } -> std::same_as<typename Q::F::V>;
  { Q::template HalfToFloat<true>(v) } -> std::same_as<typename Q::F::V>;
  { Q::E8M0Half(v) } -> std::same_as<typename Q::F::V>;
  { Q::ToFloat(v) } -> std::same_as<typename Q::F::V>;
  // i32 lanes.
  { Q::Zero() } -> std::same_as<typename Q::VI>;
  { Q::Set1(c) } -> std::same_as<typename Q::VI>;
  { Q::Add(v, v) } -> std::same_as<typename Q::VI>;
  { Q::Sub(v, v) } -> std::same_as<typename Q::VI>;
  { Q::MulLo(v, v) } -> std::same_as<typename Q::VI>;
  { Q::ShiftLeft(v, n) } -> std::same_as<typename Q::VI>;
  { Q::ShiftRight(v, n) } -> std::same_as<typename Q::VI>;       // logical
  { Q::ShiftRightArith(v, n) } -> std::same_as<typename Q::VI>;
  { Q::Bits(v, n, n) } -> std::same_as<typename Q::VI>;          // (v >> shift) & mask
  // i16 lanes.
  { Q::ShiftLeft16(v, n) } -> std::same_as<typename Q::VI>;
  { Q::ShiftRight16(v, n) } -> std::same_as<typename Q::VI>;     // logical
  // Bytes.
  { Q::And(v, v) } -> std::same_as<typename Q::VI>;
  { Q::Or(v, v) } -> std::same_as<typename Q::VI>;
  { Q::Set1Byte(c) } -> std::same_as<typename Q::VI>;
  { Q::LowNibbles(v) } -> std::same_as<typename Q::VI>;
  { Q::HighNibbles(v) } -> std::same_as<typename Q::VI>;
  { Q::SpreadHighBits(v) } -> std::same_as<typename Q::VI>;  // bit i of the low 4 -> byte i bit 4
  { Q::LookUp(v, v) } -> std::same_as<typename Q::VI>;       // table[index] per byte, 16 entries
  { Q::SignedTable(table) } -> std::same_as<typename Q::VI>; // a signed table, in the encoding
  { Q::SignedBytes(v) } -> std::same_as<typename Q::VI>;     // raw int8 weights, in the encoding
  // acc + per-lane sums of the 4 byte products w0 * a0 and w1 * a1, exactly (unsigned w <= 63,
  // or biased signed w on VNNI, against signed a).
  { Q::DotPair(v, v, v, v, v) } -> std::same_as<typename Q::VI>;
  // Partial sums of byte products (the packed tiles, packed_blocks-inl.h): the ISA's own form of
  // a running sum of DotFirst/DotNext terms (each: per lane the 4 products of unsigned w and
  // signed a), exact while it holds at most DotTermsMax(w_max) terms of weights <= w_max; Widen
  // makes it i32 lanes, WidenScaled(p, WidenScale(sc)) i32 lanes times sc (|sc| < 2^15).
  // kPartialI32: a partial is already i32 lanes (VNNI). ByteScale(v, j): signed byte j of each
  // lane as a WidenScale'd scale; SignedBytePair16(v, lo, hi): the int16 pair of signed bytes lo
  // and hi of each lane; DotWords(acc, a, b): acc + the sum of a lane's two int16 products.
  { Q::kPartialI32 } -> std::convertible_to<bool>;
  { Q::DotTermsMax(n) } -> std::same_as<int>;
  { Q::DotFirst(v, v) } -> std::same_as<typename Q::VI>;
  { Q::DotNext(v, v, v) } -> std::same_as<typename Q::VI>;
  { Q::Widen(v) } -> std::same_as<typename Q::VI>;
  { Q::WidenScale(v) } -> std::same_as<typename Q::VI>;
  { Q::WidenScaled(v, v) } -> std::same_as<typename Q::VI>;
  { Q::ByteScale(v, n) } -> std::same_as<typename Q::VI>;
  { Q::SignedBytePair16(v, n, n) } -> std::same_as<typename Q::VI>;
  { Q::DotWords(v, v, v) } -> std::same_as<typename Q::VI>;
};
// clang-format on

}  // namespace tandem::kernels::simd
