// Where a block's bytes are in the interleaved (packed) layout of matmul_repack.h, for the repack
// and for the packed block kernels (simd/packed_blocks-inl.h) every ISA instantiates.
//
// A group of R rows holds its rows' blocks in order; within a block, each unit of u bytes at
// row-major offset o (o a multiple of u) is stored for the R rows together, row r's at R * o + u *
// r. The kernels address a block in the 8-row unit (PackedAt); the 16-row layout has every offset
// twice as large. Offsets come from the codecs' block structs (tensor/formats/).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/blocks.h"

namespace tandem::kernels::packed {

// The 8-row group block offset of row-major block offset o.
constexpr int64_t At(size_t o) {
  return 8 * static_cast<int64_t>(o);
}

// A byte range of a block interleaved in units of `unit` bytes (what the repack copies).
struct Segment {
  size_t offset, bytes, unit;
};

// Q4_0 and Q8_0: the fp16 scale (one unit), then the quants in dwords.
template <class Block>
struct Legacy {
  static constexpr Segment kSegments[2] = {{offsetof(Block, d), sizeof(Block::d), sizeof(Block::d)},
                                           {offsetof(Block, qs), sizeof(Block::qs), 4}};
  static constexpr int64_t kBlockBytes = At(sizeof(Block));
  static constexpr int64_t kScales = At(offsetof(Block, d));
  // Quant dword k: elements 4k..4k+3 (Q8_0); low nibbles 4k..4k+3, high 16+4k.. (Q4_0).
  static constexpr int64_t Quants(int k) { return At(offsetof(Block, qs) + 4 * k); }
};
using Q4_0 = Legacy<BlockQ4_0>;
using Q8_0 = Legacy<BlockQ8_0>;

// Q4_K: all 36 dwords (d|dmin, 3 of scales, 32 of quants).
struct Q4_K {
  static constexpr Segment kSegments[1] = {{0, sizeof(BlockQ4_K), 4}};
  static constexpr int64_t kBlockBytes = At(sizeof(BlockQ4_K));
  static constexpr int64_t kScaleMin = At(offsetof(BlockQ4_K, d));  // d | dmin << 16
  // Scale dword i (0..2) of the 12 packed scale bytes.
  static constexpr int64_t Scales(int i) { return At(offsetof(BlockQ4_K, scales) + 4 * i); }
  // Quant dword 8c + l: elements 64c + 4l..+3 (low nibbles) and 64c + 32 + 4l..+3 (high).
  static constexpr int64_t Quants(int dword) { return At(offsetof(BlockQ4_K, qs) + 4 * dword); }
};

// Q6_K: the 52 dwords of ql, qh and scales, then the fp16 d (one unit).
struct Q6_K {
  static constexpr Segment kSegments[2] = {{0, offsetof(BlockQ6_K, d), 4},
                                           {offsetof(BlockQ6_K, d), sizeof(BlockQ6_K::d), 2}};
  static constexpr int64_t kBlockBytes = At(sizeof(BlockQ6_K));
  // ql dword m (0..31), qh dword m (0..15), scale dword i (0..3), the super-scale d.
  static constexpr int64_t Ql(int m) { return At(offsetof(BlockQ6_K, ql) + 4 * m); }
  static constexpr int64_t Qh(int m) { return At(offsetof(BlockQ6_K, qh) + 4 * m); }
  static constexpr int64_t Scales(int i) { return At(offsetof(BlockQ6_K, scales) + 4 * i); }
  static constexpr int64_t kD = At(offsetof(BlockQ6_K, d));
};

static_assert(Q4_0::Quants(1) == 16 + 32 && Q8_0::kBlockBytes == 8 * 34);
static_assert(Q4_K::Scales(0) == 32 && Q4_K::Quants(0) == 128 && Q4_K::kBlockBytes == 8 * 144);
static_assert(Q6_K::Qh(0) == 32 * 32 && Q6_K::Scales(0) == 32 * 48 && Q6_K::kD == 52 * 32);

}  // namespace tandem::kernels::packed
