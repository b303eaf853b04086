// Embedding row lookup: one token's row of an embedding table of any type tandem reads,
// dequantized to f32 and scaled (Gemma: token_embd × sqrt(D), per_layer_token_embd × sqrt(P)).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/type_traits.h"

namespace tandem {
class MappedFile;
class ThreadPool;
}  // namespace tandem

namespace tandem::kernels {

// A read-only [n_rows][n_cols] table (GGUF ne = {n_cols, n_rows}): row r is
// RowBytes(type, n_cols) bytes at data + r * RowBytes(type, n_cols).
struct EmbeddingTable {
  TensorType type = TensorType::kF32;
  const void* data = nullptr;
  int64_t n_rows = 0;  // vocabulary size
  int64_t n_cols = 0;  // embedding width; a multiple of the type's block size
  // The mapping `data` lies in, when rows are to be read with its ReadAt (kept out of the
  // resident set; see MappedFile::ReadAt); null: rows are read at `data` directly.
  const MappedFile* file = nullptr;
};

// out[n_cols] = dequantize(table row `id`) · scale (scale 1 leaves the row exact).
// The result depends only on the row and scale (identical on every ISA).
// Throws Error(kInvalidArgument) if id is outside [0, n_rows) (bad token ids are user input) or
// the table is malformed, Error(kUnsupported) if the type cannot be dequantized, Error(kIo) if
// the row cannot be read from `file`.
void EmbedRow(const EmbeddingTable& table, int64_t id, float scale, float* out);

// EmbedRow for ids[0..n): row i goes to out + i * out_stride (floats, >= n_cols). All ids are
// checked before anything is written. Rows are spread over `pool` when given.
void EmbedRows(const EmbeddingTable& table, const int32_t* ids, int64_t n, float scale, float* out,
               size_t out_stride, ThreadPool* pool = nullptr);

}  // namespace tandem::kernels
