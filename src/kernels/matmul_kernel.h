// The contract between MatMul's tiling (matmul.cpp) and the per-ISA micro-kernels behind it.
//
// A micro-kernel computes one tile: up to kTileRows weight rows against every activation row.
// Numerics (what makes results independent of the batch size, the tile and the thread count):
//  - quantized types: each block's integer dot is exact, and each output element accumulates
//    its blocks in order with a per-family sequence of f32 multiplies and fused multiply-adds
//    (ref/dot_ref.h). Every ISA computes exactly that, so quantized results are bitwise equal
//    across ISAs.
//  - F32/F16/BF16: each ISA has its own fixed accumulation structure (lanes over columns, one
//    horizontal sum at the end) that does not depend on the tile or the batch.
#pragma once

#include <array>
#include <cstdint>

#include "tensor/type_traits.h"

namespace tandem::kernels {

inline constexpr int kTileRows = 16;  // weight rows per micro-kernel call

// Up to kTileRows weight rows. Entries at index >= n_rows repeat the last valid row, so kernels
// may load a full tile and discard the extra lanes.
struct WeightTile {
  const uint8_t* rows[kTileRows];
  int n_rows;  // 1..kTileRows
  // Memory the kernel should prefetch (into L2) while it works, spread over its blocks: the
  // next tile's rows when they are contiguous; null otherwise.
  const uint8_t* prefetch = nullptr;
  size_t prefetch_bytes = 0;
};

// Prefetch helper for kernels: the part of tile.prefetch that belongs to block b of n_blocks.
struct PrefetchPlan {
  PrefetchPlan(const WeightTile& tile, int64_t n_blocks)
      : base(tile.prefetch),
        lines(static_cast<int64_t>(tile.prefetch_bytes + 63) / 64),
        per_block(n_blocks > 0 ? (lines + n_blocks - 1) / n_blocks : 0) {}
  const uint8_t* base;
  int64_t lines;
  int64_t per_block;
};

// Activation rows quantized for one family (Q8_0, Q8_1 or Q8_K), structure of arrays.
// Row t of each array starts at base + t * stride. Arrays are 64-byte aligned.
struct QuantizedActivations {
  int64_t n_rows = 0;  // T
  int64_t cols = 0;
  const int8_t* qs = nullptr;  // [T][qs_stride]: the quants, first `cols` used
  int64_t qs_stride = 0;
  const float* d = nullptr;  // [T][d_stride]: block scales (per 32 values, or per 256 for Q8_K)
  const float* s = nullptr;  // [T][d_stride]: Q8_1 only, fp16 d * sum(qs) per block as f32
  int64_t d_stride = 0;
  const int32_t* sum16 = nullptr;  // [T][sum16_stride]: sum of qs over each 16 values
  int64_t sum16_stride = 0;
  const int32_t* sum32 = nullptr;  // [T][sum32_stride]: sum of qs over each 32 values
  // [T][sum32_stride]: -8 · sum32, Q4_0's block offset, which its packed tiles broadcast from
  // memory (a load) instead of from a general register (a shuffle-port operation per block);
  // Q8_0 activations only, null otherwise
  const int32_t* neg8_sum32 = nullptr;
  int64_t sum32_stride = 0;
};

// y[t * ldy + i] = dot(tile.rows[i], activation row t) for i < tile.n_rows, t < acts.n_rows.
// The rows hold acts.cols / block-size blocks of the kernel's weight type.
using QuantTileFn = void (*)(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                             int64_t ldy);

// y[t * ldy + i] = dot(tile.rows[i], x + t * ldx) over `cols` values, for i < tile.n_rows and
// t < n_x. x is f32; the rows are of the kernel's float weight type.
using FloatTileFn = void (*)(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx,
                             int64_t n_x, float* y, int64_t ldy);

// Rows t0..t0+NT-1 of each QuantizedActivations array, resolved once per pass of a tile over a
// chunk of activation rows (the packed-layout kernels: per weight group they would cost as much
// as the work on a small matrix).
template <int NT>
struct ActRows {
  ActRows(const QuantizedActivations& acts, int64_t t0) {
    for (int t = 0; t < NT; ++t) {
      qs[t] = acts.qs + (t0 + t) * acts.qs_stride;
      d[t] = acts.d + (t0 + t) * acts.d_stride;
      sum16[t] = acts.sum16 + (t0 + t) * acts.sum16_stride;
      sum32[t] = acts.sum32 + (t0 + t) * acts.sum32_stride;
      neg8_sum32[t] = acts.neg8_sum32 == nullptr  // only with Q8_0 activations
                          ? nullptr
                          : acts.neg8_sum32 + (t0 + t) * acts.sum32_stride;
    }
  }
  // a[t] = row t's codes of block b (blocks of `values` codes).
  void BlockCodes(int64_t b, int64_t values, const int8_t* (&a)[NT]) const {
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) a[t] = qs[t] + values * b;
  }
  const int8_t* qs[NT];
  const float* d[NT];
  const int32_t* sum16[NT];
  const int32_t* sum32[NT];
  const int32_t* neg8_sum32[NT];
};

// One activation row of the QuantizedActivations arrays (pointers to row t of each).
struct QuantizedRow {
  int8_t* qs;      // [cols]
  float* d;        // [blocks]
  float* s;        // [blocks], Q8_1 only
  int32_t* sum16;  // [cols / 16]
  int32_t* sum32;  // [cols / 32]
};

// Quantizes x[cols] (cols a multiple of the block size) into `out`, bit-exactly as
// tensor/quantize.h's QuantizeRowQ8_0 / Q8_1 / Q8_K (for finite inputs; d and s hold the stored
// values: the fp16 ones of Q8_0/Q8_1 converted to f32).
using QuantizeRowFn = void (*)(const float* x, int64_t cols, const QuantizedRow& out);

// Interleaved (repacked) weights, matmul_repack.h: n_groups consecutive groups of the ISA's
// packed_group_rows rows, group_bytes apart; n_rows (<= packed_group_rows * n_groups) of them are
// output rows. y[t * ldy + i] = dot(row i, activation row t), with exactly the per-element
// sequence of the row-major tiles.
struct PackedTile {
  const uint8_t* groups;
  int64_t group_bytes;
  const uint8_t* end;  // the end of the packed matrix: prefetches stop there
  int n_groups;
  int n_rows;
};
using PackedTileFn = void (*)(const PackedTile& tile, const QuantizedActivations& acts, float* y,
                              int64_t ldy);
// Batches of 2 to this many activation rows (verifications) get tiles of two groups, read in
// one pass where the ISA's kernel takes two groups at once (AVX-512 Q4_0/Q8_0: its registers
// hold this many rows' accumulators for both); larger batches get L2-sized tiles.
inline constexpr int kPackedPairRows = 4;

// One ISA's kernels, indexed by TensorType id; nullptr where the ISA has no kernel for a type
// (MatMul then uses the scalar one, which gives identical results for quantized types).
struct MatMulKernelTable {
  std::array<FloatTileFn, kTensorTypeIdLimit> float_tile{};
  std::array<QuantTileFn, kTensorTypeIdLimit> quant_tile{};
  // Kernels reading the interleaved layout; nullptr where the ISA reads row-major weights.
  std::array<PackedTileFn, kTensorTypeIdLimit> packed_tile{};
  int packed_group_rows = 0;  // rows per interleaved group those kernels read (8 or 16)
  QuantizeRowFn quantize_q8_0 = nullptr;
  QuantizeRowFn quantize_q8_1 = nullptr;
  QuantizeRowFn quantize_q8_k = nullptr;
};

// The micro-kernels the vector ISA folders (avx2, avx512) define in their own namespaces, listed
// once: X(Name) stands for MatMulTile<Name>, the kernel for TensorType::k<Name>. The quantized
// types are listed by the format their activations are quantized to. The scalar path (ref) has
// a tile for every weight type of TANDEM_CODEC_TYPES (tensor/type_traits.h), and MatMul uses it
// for a type these lists leave out: a type is listed here when it deserves vector speed (its
// vector decode in simd/dot_legacy-inl.h or simd/dot_kquant-inl.h).
// clang-format off
#define TANDEM_MATMUL_FLOAT_TILES(X) X(F32) X(F16) X(BF16)
#define TANDEM_MATMUL_Q8_0_TILES(X) X(Q4_0) X(Q5_0) X(Q8_0) X(IQ4_NL) X(MXFP4)
#define TANDEM_MATMUL_Q8_1_TILES(X) X(Q4_1) X(Q5_1)
#define TANDEM_MATMUL_Q8_K_TILES(X) X(Q2_K) X(Q3_K) X(IQ4_XS) X(Q4_K) X(Q5_K) X(Q6_K)
#define TANDEM_MATMUL_QUANT_TILES(X) \
  TANDEM_MATMUL_Q8_0_TILES(X) TANDEM_MATMUL_Q8_1_TILES(X) TANDEM_MATMUL_Q8_K_TILES(X)
// clang-format on

#define TANDEM_DECLARE_FLOAT_TILE(Name)                                                    \
  void MatMulTile##Name(const WeightTile& tile, int64_t cols, const float* x, int64_t ldx, \
                        int64_t n_x, float* y, int64_t ldy);
#define TANDEM_DECLARE_QUANT_TILE(Name)                                                     \
  void MatMulTile##Name(const WeightTile& tile, const QuantizedActivations& acts, float* y, \
                        int64_t ldy);
#define TANDEM_REGISTER_FLOAT_TILE(Name) \
  t.float_tile[static_cast<size_t>(TensorType::k##Name)] = MatMulTile##Name;
#define TANDEM_REGISTER_QUANT_TILE(Name) \
  t.quant_tile[static_cast<size_t>(TensorType::k##Name)] = MatMulTile##Name;

// Inside an ISA namespace: declares its tiles and activation quantizers (QuantizeRowFn).
#define TANDEM_DECLARE_MATMUL_KERNELS                                                  \
  TANDEM_MATMUL_FLOAT_TILES(TANDEM_DECLARE_FLOAT_TILE)                                 \
  TANDEM_MATMUL_QUANT_TILES(TANDEM_DECLARE_QUANT_TILE)                                 \
  void QuantizeActivationsQ8_0(const float* x, int64_t cols, const QuantizedRow& out); \
  void QuantizeActivationsQ8_1(const float* x, int64_t cols, const QuantizedRow& out); \
  void QuantizeActivationsQ8_K(const float* x, int64_t cols, const QuantizedRow& out);

// Inside an ISA namespace: fills the MatMulKernelTable `t` from those declarations.
#define TANDEM_FILL_MATMUL_KERNEL_TABLE                 \
  TANDEM_MATMUL_FLOAT_TILES(TANDEM_REGISTER_FLOAT_TILE) \
  TANDEM_MATMUL_QUANT_TILES(TANDEM_REGISTER_QUANT_TILE) \
  t.quantize_q8_0 = QuantizeActivationsQ8_0;            \
  t.quantize_q8_1 = QuantizeActivationsQ8_1;            \
  t.quantize_q8_k = QuantizeActivationsQ8_K;

// Inside an ISA namespace: defines its MatMulKernels() table from those declarations.
#define TANDEM_DEFINE_MATMUL_KERNEL_TABLE       \
  const MatMulKernelTable& MatMulKernels() {    \
    static const MatMulKernelTable table = [] { \
      MatMulKernelTable t;                      \
      TANDEM_FILL_MATMUL_KERNEL_TABLE           \
      return t;                                 \
    }();                                        \
    return table;                               \
  }

// Inside an ISA namespace: defines the quantized tile MatMulTile<Name> (or the packed-layout one
// MatMulPacked<Name>) as a call of `kernel`, a function template instance taking the same
// arguments (the kernel may name template arguments with commas).
#define TANDEM_DEFINE_QUANT_TILE(Name, ...)                                                 \
  void MatMulTile##Name(const WeightTile& tile, const QuantizedActivations& acts, float* y, \
                        int64_t ldy) {                                                      \
    __VA_ARGS__(tile, acts, y, ldy);                                                        \
  }
#define TANDEM_DEFINE_PACKED_TILE(Name, ...)                                                  \
  void MatMulPacked##Name(const PackedTile& tile, const QuantizedActivations& acts, float* y, \
                          int64_t ldy) {                                                      \
    __VA_ARGS__(tile, acts, y, ldy);                                                          \
  }

// The packed-layout kernels an ISA may define (X(Name): MatMulPacked<Name>).
#define TANDEM_MATMUL_PACKED_TILES(X) X(Q4_0) X(Q8_0) X(Q4_K) X(Q6_K)
#define TANDEM_DECLARE_PACKED_TILE(Name)                                                      \
  void MatMulPacked##Name(const PackedTile& tile, const QuantizedActivations& acts, float* y, \
                          int64_t ldy);
#define TANDEM_REGISTER_PACKED_TILE(Name) \
  t.packed_tile[static_cast<size_t>(TensorType::k##Name)] = MatMulPacked##Name;

// Inside an ISA namespace with packed-layout kernels over groups of kPackedGroupRows rows:
// defines MatMulKernels() with them too.
#define TANDEM_DEFINE_MATMUL_KERNEL_TABLE_WITH_PACKED         \
  const MatMulKernelTable& MatMulKernels() {                  \
    static const MatMulKernelTable table = [] {               \
      MatMulKernelTable t;                                    \
      TANDEM_FILL_MATMUL_KERNEL_TABLE                         \
      TANDEM_MATMUL_PACKED_TILES(TANDEM_REGISTER_PACKED_TILE) \
      t.packed_group_rows = kPackedGroupRows;                 \
      return t;                                               \
    }();                                                      \
    return table;                                             \
  }

namespace ref {
const MatMulKernelTable& MatMulKernels();
}  // namespace ref
namespace avx2 {
const MatMulKernelTable& MatMulKernels();
}  // namespace avx2
namespace avx512 {
// Its quantized kernels need AVX-512 VNNI; MatMul uses the AVX2 ones on AVX-512 CPUs without it.
const MatMulKernelTable& MatMulKernels();
// MatMulKernels() with the packed Q4_0 and Q4_K tiles that take high nibbles out with GFNI
// (kernels::GfniActive()).
const MatMulKernelTable& MatMulKernelsGfni();
}  // namespace avx512

}  // namespace tandem::kernels
