// The in-cache layout of attention keys and values: what the KV cache writes and the attention
// kernel reads (kernels/attention.h).
//
// Layout. One row per (position, kv head): head_dim values in the cache type, encoded exactly as
// a ggml tensor row of that type (f32, f16, bf16, or q8_0 / q4_0 blocks of 32; StoreKvRow in
// attention.h writes one). Absolute position p (0-based, continuing across the sequence) lives in
// ring slot p % n_slots, so a full-attention cache is a ring of capacity >= context length and a
// sliding-window cache a ring of capacity >= window + the largest batch - 1. Row (slot s, kv head
// h) of K starts at `k + s * slot_stride_bytes + h * head_stride_bytes`; V alike from `v`. The
// strides leave the order to the cache: slot-major ([slot][head][head_dim], head_stride =
// row bytes) or head-major ([head][slot][head_dim], slot_stride = row bytes).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/type_traits.h"

namespace tandem::kernels {

// Largest head_dim the attention kernel takes (Gemma 4 uses 256 and 512).
inline constexpr int kMaxHeadDim = 1024;

// True for the types a KV cache may use: f32, f16, bf16, q8_0, q4_0.
constexpr bool IsKvCacheType(TensorType type) {
  return type == TensorType::kF32 || type == TensorType::kF16 || type == TensorType::kBF16 ||
         type == TensorType::kQ8_0 || type == TensorType::kQ4_0;
}

// Half-open range [begin, end) of absolute key positions.
struct KeyRange {
  int32_t begin = 0;
  int32_t end = 0;
};

// One layer's cached K and V for one sequence, read-only. Cheap to copy; owns nothing.
// The assistant (MTP) attends to the target's cache by being handed the target layer's view.
struct KvView {
  TensorType type = TensorType::kF32;  // IsKvCacheType
  const void* k = nullptr;             // row (slot, head) layout above
  const void* v = nullptr;             // same layout and type; may equal k (V = K)
  int n_kv_heads = 0;
  int head_dim = 0;     // values per row; a multiple of 32 for q8_0 / q4_0
  int64_t n_slots = 0;  // ring capacity in positions
  size_t slot_stride_bytes = 0;
  size_t head_stride_bytes = 0;
  KeyRange stored;  // positions the cache holds now (written and not yet overwritten);
                    // stored.end - stored.begin <= n_slots
  // Optional (a draft tree's row, docs/mtp.md § Draft trees): the key of position p in
  // [remap_begin, remap_begin + remap_count) is stored at position remap[p - remap_begin], the
  // others where they are. The row then reads its own path's keys in order, as a linear row at
  // the same position would.
  const int32_t* remap = nullptr;
  int32_t remap_begin = 0;
  int32_t remap_count = 0;

  // Where the key of position `pos` is stored (pos itself without a remap).
  int32_t StoredAt(int32_t pos) const {
    return remap != nullptr && pos >= remap_begin ? remap[pos - remap_begin] : pos;
  }
  // Slot of absolute position `pos` (>= 0), as stored (no remap).
  int64_t Slot(int32_t pos) const { return pos % n_slots; }
  const uint8_t* KRow(int32_t pos, int head) const {
    return static_cast<const uint8_t*>(k) + Slot(StoredAt(pos)) * slot_stride_bytes +
           head * head_stride_bytes;
  }
  const uint8_t* VRow(int32_t pos, int head) const {
    return static_cast<const uint8_t*>(v) + Slot(StoredAt(pos)) * slot_stride_bytes +
           head * head_stride_bytes;
  }
};

}  // namespace tandem::kernels
