// Streams a tensor's rows, read as f32 and encoded into a ggml type, in bounded chunks with the
// rows of each chunk spread over a thread pool: conversion and quantization share it. Every row
// is encoded on its own, so the bytes never depend on the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "gguf/gguf_writer.h"
#include "tensor/type_traits.h"

namespace tandem {

class ThreadPool;

// Writes row `row` of the source as f32 into `out[row_len]`. Called concurrently for different
// rows, so it must be thread-safe and must not throw; returns false if the row holds a
// non-finite value (the encode then fails).
using RowReader = std::function<bool(uint64_t row, float* out)>;

struct RowEncodeJob {
  std::string name;  // the tensor, for messages
  TensorType type;   // F32, or a type QuantizeRow produces
  uint64_t row_len;  // ne[0]; a multiple of the type's block size
  uint64_t n_rows;   // ne[1] * ne[2] * ne[3]
};

// Bytes EncodeRows produces for `job`.
uint64_t EncodedBytes(const RowEncodeJob& job);

// Reads, encodes and passes the rows to `sink` in chunks of about 8 MiB of f32 input, calling
// `progress(encoded bytes)` after each chunk. Throws Error(kInvalidArgument) if the row length
// does not fit the type's blocks, Error(kCorrupt) naming the tensor and the first bad row if the
// reader rejects one.
void EncodeRows(const RowEncodeJob& job, const RowReader& read, const GgufByteSink& sink,
                ThreadPool& pool, const std::function<void(uint64_t bytes)>& progress);

}  // namespace tandem
