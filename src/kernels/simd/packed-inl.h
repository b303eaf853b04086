// What the packed (interleaved, packed_layout.h) tiles of every ISA share, over the lane trait
// (tile_lanes.h) of the ISA translation unit that includes it: lane r of a vector is row r of
// the group, so these are the row-major tiles' per-lane steps on whole vectors of rows.
#pragma once

#include <cstdint>

#include "kernels/simd/tile_lanes.h"

namespace tandem::kernels::simd::packed {

// Lane r: (lo lane r & 0xFFFF) | (hi lane r << 16), the 16-bit pair a 16-bit madd multiplies.
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::VI Pair16(typename Q::VI lo, typename Q::VI hi) {
  return Q::Or(Q::And(lo, Q::Set1(0xFFFF)), Q::ShiftLeft(hi, 16));
}

// Every lane: the int16 pair (s[0], s[1]) (both within int16).
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::VI BroadcastPair16(const int32_t* s) {
  return Q::Set1(static_cast<int32_t>((static_cast<uint32_t>(s[0]) & 0xFFFF) |
                                      (static_cast<uint32_t>(s[1]) << 16)));
}

// Q6_K: the 6-bit codes (0..63, value q - 32) of the elements 128n + 32k + 4l..+3 from their ql
// dword (16n + 8(k & 1) + l: high nibbles for k >= 2) and qh dword (8n + l: bits 2k, 2k + 1).
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::VI Q6KCodes(typename Q::VI ql, typename Q::VI qh, int k) {
  const typename Q::VI m4 = Q::Set1Byte(0x0F), m30 = Q::Set1Byte(0x30);
  const typename Q::VI lo = Q::And(k < 2 ? ql : Q::ShiftRight16(ql, 4), m4);
  const typename Q::VI hi = k == 0   ? Q::ShiftLeft16(qh, 4)
                            : k == 1 ? Q::ShiftLeft16(qh, 2)
                            : k == 2 ? qh
                                     : Q::ShiftRight16(qh, 2);
  return Q::Or(lo, Q::And(hi, m30));
}

// The reference's f32 steps per block (kernels/ref/dot_ref.h) for a vector of rows against an
// activation row with scale da: acc + (d * da) * float(isum) with one rounding for the fused
// step, and the K-quants' minimum term acc - (dmin * da) * float(imin).
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::F::V ScaleAdd(typename Q::F::V d, float da,
                                                        typename Q::VI isum, typename Q::F::V acc) {
  using F = typename Q::F;
  return F::MulAdd(F::Mul(d, F::Set1(da)), Q::ToFloat(isum), acc);
}
template <TileLanesTrait Q>
[[gnu::always_inline]] inline typename Q::F::V MinSub(typename Q::F::V dmin, float da,
                                                      typename Q::VI imin, typename Q::F::V acc) {
  using F = typename Q::F;
  return F::NegMulAdd(F::Mul(dmin, F::Set1(da)), Q::ToFloat(imin), acc);
}

}  // namespace tandem::kernels::simd::packed
