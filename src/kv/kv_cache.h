// Per-layer K/V storage for several sequences: a ring of slots per (layer, sequence), sized to
// the context for full-attention layers and to window + max batch for sliding ones, in any KV
// cache type (f32, f16, bf16, q8_0, q4_0). Rollback after speculation is one Truncate().
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/kv_types.h"
#include "tensor/type_traits.h"

namespace tandem {

struct KvLayerSpec {
  int n_kv_heads = 0;
  int head_dim = 0;
  int window = 0;  // sliding window; 0 = full attention (the ring holds the whole context)
};

struct KvCacheOptions {
  TensorType type = TensorType::kF16;
  int n_ctx = 4096;     // positions per sequence
  int n_seq = 1;        // sequences (server slots)
  int max_batch = 512;  // most positions one sequence appends in one forward call
};

class KvCache {
 public:
  // Storage for each layer in `layers` (only KV-owning layers need one). Throws
  // Error(kInvalidArgument) for a type that is not a KV cache type or bad sizes.
  KvCache(std::vector<KvLayerSpec> layers, const KvCacheOptions& options);
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  int n_layers() const { return static_cast<int>(layers_.size()); }
  int n_seq() const { return options_.n_seq; }
  int n_ctx() const { return options_.n_ctx; }
  int max_batch() const { return options_.max_batch; }
  TensorType type() const { return options_.type; }
  size_t bytes() const;  // total storage

  // Positions [0, Length(seq)) are committed for `seq`.
  int32_t Length(int seq) const { return seqs_.at(seq).length; }

  // Makes room for positions [Length(seq), Length(seq) + n) and commits them; their rows must
  // then be written with KRow/VRow before they are read. Throws Error(kInvalidArgument) when n
  // exceeds max_batch or the context would overflow.
  void Append(int seq, int n);
  // Forgets positions >= n_pos (speculative rollback); n_pos <= Length(seq).
  void Truncate(int seq, int32_t n_pos);
  void Clear(int seq) { Truncate(seq, 0); }
  // Copies the K/V rows of position `from` to the earlier position `to` in every layer: a
  // verified draft tree's kept path moves to the positions a linear draft would have filled
  // (docs/mtp.md § Draft trees). Throws Error(kInvalidArgument) unless
  // 0 <= to < from < Length(seq) and from - to <= max_batch (both within one forward's rows).
  void CopyPosition(int seq, int32_t from, int32_t to);
  // True if after Truncate(seq, n_pos) every sliding layer still holds the window that a query
  // at n_pos needs (a ring may have overwritten older positions with newer ones).
  bool CanTruncateTo(int seq, int32_t n_pos) const;

  // The layer's shape (as given to the constructor).
  const KvLayerSpec& layer_spec(int layer) const { return layers_.at(layer).spec; }
  // The oldest position whose rows `layer` still holds for `seq` (0 for a full-attention layer;
  // a sliding ring may have overwritten older ones). Positions [OldestHeld, Length) are intact.
  int32_t OldestHeld(int layer, int seq) const;
  // Restoring a saved sequence: forgets `seq` and commits positions [0, length) at once (no
  // max_batch limit), marking each layer's rows from oldest[layer] on as held (the saved rows
  // start there; a ring keeps at most its size of them). Then OldestHeld(layer, seq) >=
  // oldest[layer], and the rows of [OldestHeld, length) must be written with KRow/VRow. Throws
  // Error(kInvalidArgument) for length outside [0, n_ctx], a size other than n_layers, or an
  // oldest position outside [0, length] (above 0 for a full-attention layer), or rows a ring of
  // this cache cannot mark as held without passing the context.
  void Adopt(int seq, int32_t length, const std::vector<int32_t>& oldest);

  // Where the K (V) row of (layer, seq, pos, head) lives; KvRowBytes(type, head_dim) bytes.
  uint8_t* KRow(int layer, int seq, int32_t pos, int head);
  uint8_t* VRow(int layer, int seq, int32_t pos, int head);
  // Read view of one layer for one sequence, for the attention kernel.
  kernels::KvView View(int layer, int seq) const;

 private:
  struct Layer {
    KvLayerSpec spec;
    int64_t n_slots = 0;
    size_t row_bytes = 0;
    size_t slot_bytes = 0;                   // n_kv_heads * row_bytes
    std::vector<std::vector<uint8_t>> k, v;  // [seq][n_slots * slot_bytes]
  };
  struct Seq {
    int32_t length = 0;
    // Highest length reached since the last Clear: a ring of n slots still holds the positions
    // >= high_water - n (rolled-back positions overwrote the ones n slots before them).
    int32_t high_water = 0;
  };
  uint8_t* Row(std::vector<std::vector<uint8_t>>& buf, const Layer& layer, int seq, int32_t pos,
               int head);

  KvCacheOptions options_;
  std::vector<Layer> layers_;
  std::vector<Seq> seqs_;
};

}  // namespace tandem
