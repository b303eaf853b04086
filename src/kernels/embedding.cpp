// Embedding row lookup through the reference dequantizers.
#include "kernels/embedding.h"

#include <string>
#include <vector>

#include "base/error.h"
#include "base/mapped_file.h"
#include "base/thread_pool.h"
#include "tensor/dequantize.h"

namespace tandem::kernels {
namespace {

void CheckTable(const EmbeddingTable& table) {
  const TensorTypeTraits& traits = GetTensorTypeTraits(table.type);
  if (!traits.dequantizable) {
    Fail(ErrorKind::kUnsupported,
         "embedding: tensor type " + std::string(traits.name) + " cannot be dequantized");
  }
  CheckRowLength(table.type, table.n_cols, "embedding table width");
  if (table.n_rows < 0 || (table.data == nullptr && table.n_rows > 0)) {
    Fail(ErrorKind::kInvalidArgument,
         "embedding: table of " + std::to_string(table.n_rows) + " rows has no data");
  }
}

void CheckId(const EmbeddingTable& table, int64_t id) {
  if (id < 0 || id >= table.n_rows) {
    Fail(ErrorKind::kInvalidArgument, "embedding: token id " + std::to_string(id) +
                                          " is outside the table's " +
                                          std::to_string(table.n_rows) + " rows");
  }
}

void Lookup(const EmbeddingTable& table, int64_t id, float scale, float* out) {
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(table.type), table.n_cols);
  const uint8_t* row =
      static_cast<const uint8_t*>(table.data) + static_cast<size_t>(id) * row_bytes;
  if (table.file != nullptr) {
    thread_local std::vector<uint8_t> copy;
    copy.resize(row_bytes);
    table.file->ReadAt(row, row_bytes, copy.data());
    row = copy.data();
  }
  DequantizeRow(table.type, row, out, table.n_cols);
  if (scale != 1.0f) {
    for (int64_t i = 0; i < table.n_cols; ++i) out[i] *= scale;
  }
}

}  // namespace

void EmbedRow(const EmbeddingTable& table, int64_t id, float scale, float* out) {
  CheckTable(table);
  CheckId(table, id);
  Lookup(table, id, scale, out);
}

void EmbedRows(const EmbeddingTable& table, const int32_t* ids, int64_t n, float scale, float* out,
               size_t out_stride, ThreadPool* pool) {
  CheckTable(table);
  for (int64_t i = 0; i < n; ++i) CheckId(table, ids[i]);
  if (out_stride < static_cast<size_t>(table.n_cols)) {
    Fail(ErrorKind::kInvalidArgument, "embedding: out_stride " + std::to_string(out_stride) +
                                          " is smaller than the width " +
                                          std::to_string(table.n_cols));
  }
  auto rows = [&](size_t begin, size_t end, int /*thread*/) {
    for (size_t i = begin; i < end; ++i) Lookup(table, ids[i], scale, out + i * out_stride);
  };
  if (pool == nullptr) {
    rows(0, static_cast<size_t>(n), 0);
  } else {
    pool->ParallelForRange(static_cast<size_t>(n), rows);
  }
}

}  // namespace tandem::kernels
