// AVX2 instantiation of the packed tiles (simd/packed_blocks-inl.h, simd/packed_tile-inl.h) for
// Q4_0, Q8_0, Q4_K and Q6_K: groups of 8 rows, 16 registers and no VNNI. The tuning follows
// from the register count: one quant vector at a time serves every activation row of a pass, so
// what stays live is one partial sum per row (maddubs's 16-bit pair sums) and, for the K-quants,
// a 32-bit block sum beside it: 8 rows per pass for Q4_0 and Q8_0, 6 (12 registers, plus the
// quant vector, its mask and a broadcast activation) for the K-quants. Wider passes spill, and a
// whole decoded Q8_0 block for fewer rows was slower too (bench/README.md § Kernel choices).
#include <immintrin.h>

#include <cstdint>

#include "kernels/avx2/dot_avx2.h"
#include "kernels/avx2/dot_lanes.h"
#include "kernels/simd/packed_blocks-inl.h"

namespace tandem::kernels::avx2 {
namespace {

struct PackedTuning {
  static constexpr int kRows32 = 8;
  static constexpr int kRowsQ4_K = 6;
  static constexpr int kRowsQ6_K = 6;
  // Prefetches 1 KiB ahead of the block being decoded, whatever the pass.
  static constexpr int64_t PrefetchAhead(int /*nt*/) { return 1024; }
  // Without the pins GCC computes a whole block's maddubs products first and spills them.
  static constexpr bool kPinPartials = true;
  static constexpr bool kBlockInRegisters = false;
  static constexpr int kPairRows = 0;
  // The pair and decode-once paths are off: their constants complete the tuning's interface
  // (packed_blocks-inl.h) but nothing reads them.
  [[maybe_unused]] static constexpr int64_t kPairAhead = 0;
  static constexpr bool kDecodeOnce = false;
  [[maybe_unused]] static constexpr int kDecodeChunkBlocks = 0;
  [[maybe_unused]] static constexpr int kDecodeRows = 0;
};

}  // namespace

TANDEM_DEFINE_PACKED_TILES

}  // namespace tandem::kernels::avx2
