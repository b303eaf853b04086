// AVX-512 VNNI instantiation of the packed tiles (simd/packed_blocks-inl.h,
// simd/packed_tile-inl.h) for Q4_0, Q8_0, Q4_K and Q6_K: groups of 16 rows (zmm lane r = row r),
// 32 registers, and VPDPBUSD, which adds 64 exact byte products per instruction into i32 lanes.
// - Q4_0 and Q8_0, whose unpacking is cheap, keep a block's 8 quant vectors in registers, and
//   take two groups at once (each broadcast activation dword feeds two VPDPBUSD; with one product
//   per broadcast, the broadcasts bounded the kernel) for decoding of long rows (a tile of two
//   groups, matmul.cpp), verifications of 2-4 rows and prefill (4 rows at a time);
// - Q4_K and Q6_K, whose unpacking costs a large share of the products, decode each group's
//   blocks once into L1 for batches past a pass, every activation row reading them there.
// - Q4_0 and Q4_K take each high nibble out with one GFNI affine transform where the host has
//   GFNI (TileLanes16Gfni, in the table MatMulKernelsGfni(), which MatMul reads while
//   kernels::GfniActive()), a shift and a mask without.
// A group is 16 rows, one zmm, rather than two 8-row groups side by side: two streams restarting
// at every pair cost short rows (K = 1536) much of their bandwidth. What each choice gained:
// bench/README.md § Kernel choices.

// GCC 12 reports its own _mm512_undefined_*() placeholders inside intrinsics as uninitialized.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

#include <cstdint>

#include "kernels/avx512/dot_avx512.h"
#include "kernels/avx512/dot_lanes.h"
#include "kernels/simd/packed_blocks-inl.h"

namespace tandem::kernels::avx512 {
namespace {

struct PackedTuning {
  static constexpr int kRows32 = 16;
  static constexpr int kRowsQ4_K = 8;
  static constexpr int kRowsQ6_K = 6;
  // How far ahead of the block being decoded (8-row units: twice as many bytes) a pass of nt
  // activation rows prefetches: with more than 4 rows a block takes long enough that 2 KiB ahead
  // arrives late.
  static constexpr int64_t PrefetchAhead(int nt) { return nt > 4 ? 4096 : 1024; }
  static constexpr bool kPinPartials = false;
  static constexpr bool kBlockInRegisters = true;
  // Activation rows per pass when two groups go together: 16 quant vectors, 2 scale vectors and
  // 2 x 4 accumulators fill the 32 registers. Each stream prefetches 4 KiB ahead.
  static constexpr int kPairRows = kPackedPairRows;
  static constexpr int64_t kPairAhead = 2048;
  static constexpr bool kDecodeOnce = true;
  static constexpr int kDecodeChunkBlocks = 4;  // 4 decoded blocks stay in L1
  static constexpr int kDecodeRows = 4;         // activation rows per pass over them (8 spilled)
};

}  // namespace

TANDEM_DEFINE_PACKED_TILES

const MatMulKernelTable& MatMulKernelsGfni() {
  static const MatMulKernelTable table = [] {
    using simd::packed::RunPackedTile;
    using G = TileLanes16Gfni;
    MatMulKernelTable t = MatMulKernels();
    t.packed_tile[static_cast<size_t>(TensorType::kQ4_0)] =
        RunPackedTile<G, simd::packed::PackedQ4_0<G, PackedTuning>>;
    t.packed_tile[static_cast<size_t>(TensorType::kQ4_K)] =
        RunPackedTile<G, simd::packed::PackedQ4_K<G, PackedTuning>>;
    return t;
  }();
  return table;
}

}  // namespace tandem::kernels::avx512
