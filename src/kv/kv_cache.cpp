#include "kv/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.h"
#include "kernels/attention.h"

namespace tandem {

KvCache::KvCache(std::vector<KvLayerSpec> layers, const KvCacheOptions& options)
    : options_(options), seqs_(options.n_seq) {
  if (!kernels::IsKvCacheType(options.type)) {
    Fail(ErrorKind::kInvalidArgument, "KV cache type " + std::string(TensorTypeName(options.type)) +
                                          " is not one of f32, f16, bf16, q8_0, q4_0");
  }
  if (options.n_ctx <= 0 || options.n_seq <= 0 || options.max_batch <= 0) {
    Fail(ErrorKind::kInvalidArgument, "KV cache: n_ctx, n_seq and max_batch must be > 0");
  }
  for (const KvLayerSpec& spec : layers) {
    Layer layer;
    layer.spec = spec;
    layer.n_slots = spec.window > 0
                        ? std::min<int64_t>(options.n_ctx, spec.window + options.max_batch - 1)
                        : options.n_ctx;
    layer.row_bytes = kernels::KvRowBytes(options.type, spec.head_dim);
    layer.slot_bytes = layer.row_bytes * spec.n_kv_heads;
    layer.k.assign(options.n_seq, std::vector<uint8_t>(layer.n_slots * layer.slot_bytes));
    layer.v.assign(options.n_seq, std::vector<uint8_t>(layer.n_slots * layer.slot_bytes));
    layers_.push_back(std::move(layer));
  }
}

size_t KvCache::bytes() const {
  size_t total = 0;
  for (const Layer& l : layers_) total += 2 * l.n_slots * l.slot_bytes * options_.n_seq;
  return total;
}

void KvCache::Append(int seq, int n) {
  Seq& s = seqs_.at(seq);
  if (n < 0 || n > options_.max_batch) {
    Fail(ErrorKind::kInvalidArgument, "KV cache: appending " + std::to_string(n) +
                                          " positions, at most " +
                                          std::to_string(options_.max_batch) + " per call");
  }
  if (s.length + n > options_.n_ctx) {
    Fail(ErrorKind::kInvalidArgument, "context overflow: sequence " + std::to_string(seq) +
                                          " would reach " + std::to_string(s.length + n) +
                                          " positions, context is " +
                                          std::to_string(options_.n_ctx));
  }
  s.length += n;
  s.high_water = std::max(s.high_water, s.length);
}

void KvCache::Truncate(int seq, int32_t n_pos) {
  Seq& s = seqs_.at(seq);
  if (n_pos < 0 || n_pos > s.length) {
    Fail(ErrorKind::kInvalidArgument, "KV cache: cannot truncate sequence " + std::to_string(seq) +
                                          " of length " + std::to_string(s.length) + " to " +
                                          std::to_string(n_pos));
  }
  s.length = n_pos;
  if (n_pos == 0) s.high_water = 0;
}

void KvCache::CopyPosition(int seq, int32_t from, int32_t to) {
  const Seq& s = seqs_.at(seq);
  if (to < 0 || to >= from || from >= s.length || from - to > options_.max_batch) {
    Fail(ErrorKind::kInvalidArgument,
         "KV cache: cannot copy position " + std::to_string(from) + " to " + std::to_string(to) +
             " in sequence " + std::to_string(seq) + " of length " + std::to_string(s.length));
  }
  for (Layer& l : layers_) {
    if (l.slot_bytes == 0) continue;
    std::memcpy(Row(l.k, l, seq, to, 0), Row(l.k, l, seq, from, 0), l.slot_bytes);
    std::memcpy(Row(l.v, l, seq, to, 0), Row(l.v, l, seq, from, 0), l.slot_bytes);
  }
}

bool KvCache::CanTruncateTo(int seq, int32_t n_pos) const {
  const Seq& s = seqs_.at(seq);
  if (n_pos < 0 || n_pos > s.length) return false;
  if (n_pos == 0) return true;  // a clear forgets the ring's history too
  for (const Layer& l : layers_) {
    const int64_t oldest_held = std::max<int64_t>(0, s.high_water - l.n_slots);
    const int64_t oldest_needed =
        l.spec.window > 0 ? std::max<int64_t>(0, n_pos - l.spec.window + 1) : 0;
    if (oldest_held > oldest_needed) return false;
  }
  return true;
}

int32_t KvCache::OldestHeld(int layer, int seq) const {
  const Layer& l = layers_.at(layer);
  const Seq& s = seqs_.at(seq);
  return static_cast<int32_t>(std::max<int64_t>(0, s.high_water - l.n_slots));
}

void KvCache::Adopt(int seq, int32_t length, const std::vector<int32_t>& oldest) {
  Seq& s = seqs_.at(seq);
  if (length < 0 || length > options_.n_ctx || oldest.size() != layers_.size()) {
    Fail(ErrorKind::kInvalidArgument, "KV cache: cannot adopt " + std::to_string(length) +
                                          " positions of " + std::to_string(oldest.size()) +
                                          " layers in a context of " +
                                          std::to_string(options_.n_ctx) + " with " +
                                          std::to_string(layers_.size()) + " layers");
  }
  // The smallest high water mark at which every ring holds no position older than `oldest`.
  int64_t high_water = length;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const int32_t from = oldest[l];
    if (from < 0 || from > length || (layers_[l].spec.window == 0 && from != 0)) {
      Fail(ErrorKind::kInvalidArgument, "KV cache: layer " + std::to_string(l) +
                                            " cannot hold positions from " + std::to_string(from) +
                                            " of " + std::to_string(length));
    }
    if (from > 0) high_water = std::max(high_water, from + layers_[l].n_slots);
  }
  // A full-attention ring holds the whole context: the mark never passes it.
  if (high_water > options_.n_ctx) {
    Fail(ErrorKind::kInvalidArgument,
         "KV cache: the sliding-window rows to adopt do not fit this cache's rings (a context "
         "of " +
             std::to_string(options_.n_ctx) + ")");
  }
  s.length = length;
  s.high_water = length == 0 ? 0 : static_cast<int32_t>(high_water);
}

uint8_t* KvCache::Row(std::vector<std::vector<uint8_t>>& buf, const Layer& layer, int seq,
                      int32_t pos, int head) {
  return buf[seq].data() + (pos % layer.n_slots) * layer.slot_bytes + head * layer.row_bytes;
}

uint8_t* KvCache::KRow(int layer, int seq, int32_t pos, int head) {
  Layer& l = layers_.at(layer);
  return Row(l.k, l, seq, pos, head);
}

uint8_t* KvCache::VRow(int layer, int seq, int32_t pos, int head) {
  Layer& l = layers_.at(layer);
  return Row(l.v, l, seq, pos, head);
}

kernels::KvView KvCache::View(int layer, int seq) const {
  const Layer& l = layers_.at(layer);
  const Seq& s = seqs_.at(seq);
  kernels::KvView view;
  view.type = options_.type;
  view.k = l.k[seq].data();
  view.v = l.v[seq].data();
  view.n_kv_heads = l.spec.n_kv_heads;
  view.head_dim = l.spec.head_dim;
  view.n_slots = l.n_slots;
  view.slot_stride_bytes = l.slot_bytes;
  view.head_stride_bytes = l.row_bytes;
  view.stored.begin = static_cast<int32_t>(std::max<int64_t>(0, s.high_water - l.n_slots));
  view.stored.end = s.length;
  return view;
}

}  // namespace tandem
