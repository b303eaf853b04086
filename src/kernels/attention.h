// Softmax attention of query rows against a layer's KV cache (kernels/kv_types.h): GQA, causal
// and sliding-window visibility, a ring-buffer cache, K/V in f32, f16, bf16, q8_0 or q4_0.
//
// Numerics: a (query row, head) is a streaming ("online") softmax (heads sharing a KV head are
// processed together to share the K/V loads, without changing any head's arithmetic): keys are
// visited in ascending position in fixed blocks of kAttentionKeyBlock counted from the first
// visible key, so no T x context buffer exists. Splits: a row that sees more than
// kAttentionKeySplit keys is cut into splits of that many keys (counted from its first visible
// key), each such a softmax of its own, whose states (unnormalised Σ p·v, max, Σ p) are folded in
// ascending order and then normalised; splits may run on different threads (decode at depth: each
// thread reads its share of the KV rows). So a row's output depends only on its query, its
// visible keys and the active ISA -- never on the batch size, the row's place in the batch, the
// thread count or which thread ran which split.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/kv_types.h"
#include "tensor/type_traits.h"

namespace tandem {
class ThreadPool;
}

namespace tandem::kernels {

// Keys per softmax block (the same for every ISA).
inline constexpr int kAttentionKeyBlock = 32;
// Keys per split (see Numerics), a multiple of kAttentionKeyBlock.
inline constexpr int kAttentionKeySplit = 1024;
static_assert(kAttentionKeySplit % kAttentionKeyBlock == 0);

// Keys visible to a query at `pos`: causal (key <= pos) and, when window > 0, inside the sliding
// window (pos - key < window, the window includes the query itself). window 0 = plain causal.
KeyRange VisibleKeys(int32_t pos, int32_t window);

// A draft tree row's path (KvView::remap): the keys of positions [begin, begin + count) are
// stored at positions[0 .. count). count 0: none.
struct KeyRemap {
  const int32_t* positions = nullptr;
  int32_t begin = 0;
  int32_t count = 0;
};

struct AttentionArgs {
  int n_rows = 0;            // query rows (tokens of one sequence)
  int n_heads = 0;           // query heads; a multiple of kv.n_kv_heads (query head h reads kv head
                             // h / (n_heads / n_kv_heads))
  const float* q = nullptr;  // [n_rows][n_heads][kv.head_dim], normed and RoPE'd; row r at
  size_t q_row_stride = 0;   // q + r * q_row_stride (floats, >= n_heads * head_dim)
  float* out = nullptr;      // [n_rows][n_heads][kv.head_dim] softmax(q·kᵀ·scale)·v; row r at
  size_t out_row_stride = 0;           // out + r * out_row_stride (floats); must not overlap q
  const int32_t* positions = nullptr;  // [n_rows] absolute position of each query row
  int32_t window = 0;                  // sliding window (VisibleKeys); 0 = full causal
  // Optional [n_rows]: each row's visible keys, overriding positions/window (e.g. an MTP
  // assistant that sees all committed positions). An empty range gives a zero output row.
  const KeyRange* key_ranges = nullptr;
  // Optional [n_rows]: each row's remap (a draft tree's rows, docs/mtp.md § Draft trees). A row's
  // visible keys must then end inside its remap.
  const KeyRemap* remaps = nullptr;
  KvView kv;
  float scale = 1.0f;  // applied to q·k (Gemma 4: 1.0)
};

// Computes args.out. Work is split over (row, KV head, group of query heads) on `pool` (nullptr:
// the calling thread); a single row still spreads its heads over the threads.
// Throws Error(kInvalidArgument) for inconsistent arguments, among them a visible key that the
// cache does not hold (outside kv.stored, or more positions than the ring has slots), and
// Error(kUnsupported) for a cache type that is not a KV cache type. Requirements: head_dim a
// positive multiple of 16 (32 for q8_0 / q4_0) and at most kMaxHeadDim.
void Attention(const AttentionArgs& args, ThreadPool* pool = nullptr);

// Unmasked attention of query rows that all see the same keys, K stored transposed (a vision
// encoder: every patch attends to every patch of its image). Two register-tiled products with
// each row's scores kept whole, instead of a streaming softmax over cache rows. Query head h
// reads kv head h / (n_heads / n_kv_heads).
struct DenseAttentionArgs {
  int n_rows = 0, n_heads = 0, n_kv_heads = 0, n_keys = 0;
  int head_dim = 0;  // the q·k length
  int v_dim = 0;     // values per key and per output row; a multiple of 16
  // Row r of head h at q + h·q_head_stride + r·q_row_stride (head_dim values), likewise out
  // (v_dim values, must not overlap q); Kᵀ of kv head g: value d of key j at
  // kt + g·kt_head_stride + d·kt_row_stride + j; V: key j of kv head g at
  // v + g·v_head_stride + j·v_row_stride.
  const float* q = nullptr;
  size_t q_head_stride = 0, q_row_stride = 0;
  const float* kt = nullptr;
  size_t kt_head_stride = 0, kt_row_stride = 0;
  const float* v = nullptr;
  size_t v_head_stride = 0, v_row_stride = 0;
  float* out = nullptr;
  size_t out_head_stride = 0, out_row_stride = 0;
  float scale = 1.0f;
};

// Computes args.out. Each row's result is bitwise the same whatever other rows share the call
// and whatever the thread count (the per-ISA order is in simd/dense_attention-inl.h); it differs
// from Attention's in the last bits (another summation order). Work is split over (head, block
// of rows) on `pool`, head-major. Throws Error(kInvalidArgument) for inconsistent arguments.
void AttentionDense(const DenseAttentionArgs& args, ThreadPool* pool = nullptr);

// Bytes of one cached row of head_dim values of `type`.
size_t KvRowBytes(TensorType type, int head_dim);

// Encodes x[head_dim] as one cache row of `type` into dst (KvRowBytes bytes): f32/f16/bf16 by
// exact or round-to-nearest-even conversion, q8_0/q4_0 with ggml's reference quantizers.
// Throws like Attention for a bad type or head_dim.
void StoreKvRow(TensorType type, const float* x, int head_dim, void* dst);

}  // namespace tandem::kernels
