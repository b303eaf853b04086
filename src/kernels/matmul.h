// Matrix multiplication of f32 activations by weights in any readable ggml type: Y = X · Wᵀ.
//
// Work is split over output rows; each weight block is read from memory once per call and used
// for every activation row, so verifying k draft tokens costs little more than decoding one.
// Activations are quantized once per row to the weight type's activation format, as llama.cpp
// does (docs/formats.md): Q8_0 for Q4_0/Q5_0/Q8_0/IQ4_NL/MXFP4, Q8_1 for Q4_1/Q5_1, Q8_K for
// Q2_K..Q6_K and IQ4_XS; F32/F16/BF16 weights meet the f32 activations directly.
//
// Numerics: for a given ISA path (kernels/isa.h) every output element is bitwise identical
// whatever the batch size T, the row's position in the batch, the thread count, and whether the
// row was computed by MatMul or gathered by MatMulRows. Quantized types are moreover bitwise
// identical across ISA paths (see matmul_kernel.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "base/thread_pool.h"
#include "tensor/type_traits.h"

namespace tandem::kernels {

// A row-major weight matrix [rows][cols] in ggml layout; row r starts at data + r * row_bytes.
struct WeightMatrix {
  TensorType type = TensorType::kF32;
  const void* data = nullptr;
  int64_t rows = 0;      // output features
  int64_t cols = 0;      // input features; a multiple of the type's block size
  size_t row_bytes = 0;  // >= RowBytes(type, cols)
  // The same rows interleaved in groups of packed_group_rows (matmul_repack.h), or null. MatMul
  // reads it where the active path has kernels for that layout, `data` otherwise; the results are
  // the same bits either way.
  const uint8_t* packed = nullptr;
  int packed_group_rows = 0;
};

// A WeightMatrix over a dense buffer (row_bytes = RowBytes(type, cols)).
WeightMatrix DenseWeightMatrix(TensorType type, const void* data, int64_t rows, int64_t cols);

// The first `rows` rows of w, its packed copy's too (a prefix of whole groups: `rows` must be a
// multiple of w.packed_group_rows where w has a packed copy, or w.rows). Throws Error otherwise.
WeightMatrix FirstRows(const WeightMatrix& w, int64_t rows);

// True if MatMul accepts weights of this type.
bool MatMulSupportsType(TensorType type);

// Checks shape, type and pointers; throws Error (kUnsupported for a type MatMul cannot read,
// kInvalidArgument otherwise) naming the problem. MatMul and MatMulRows call it.
void ValidateWeightMatrix(const WeightMatrix& w);

// y[T][w.rows] = x[T][w.cols] · Wᵀ. T may be 0. x and y must not overlap.
// Throws Error for an invalid matrix or a negative T; never throws once the work starts.
// Uses `pool` (all its threads); not reentrant on the same pool.
void MatMul(const WeightMatrix& w, const float* x, int64_t T, float* y, ThreadPool& pool);

// One product of MatMulEach: y[T][w->rows] = x · w->ᵀ.
struct MatMulProduct {
  const WeightMatrix* w = nullptr;
  float* y = nullptr;
};

// Several products of the same activations (a layer's query, key and value projections; its
// gate and up), each bitwise equal to MatMul(*p.w, x, T, p.y, pool): x is quantized once per
// activation format and the products' tiles run as one job, so the threads meet once instead of
// once per product. Every matrix must have the same cols; at most 8 products. Throws Error as
// MatMul does, before any work.
void MatMulEach(std::span<const MatMulProduct> products, const float* x, int64_t T,
                ThreadPool& pool);

// Row gather: y[T][n_rows] with y[t][i] = x[t] · W[rows[i]], bitwise equal to the same element
// of MatMul's output. Throws Error if an index is outside [0, w.rows) or n_rows < 0.
void MatMulRows(const WeightMatrix& w, const int32_t* rows, int64_t n_rows, const float* x,
                int64_t T, float* y, ThreadPool& pool);

}  // namespace tandem::kernels
