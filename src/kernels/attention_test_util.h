// What the attention kernel's tests share: a KV cache that remembers every row it was given (for
// a naive reference), random vectors, and one call of Attention.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "tensor/dequantize.h"

namespace tandem::kernels::testing_attention {

inline std::vector<float> RandomVector(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// A KV cache for tests: a ring of n_slots positions in the layout of kv_types.h, plus the
// decoded value of every row ever written (what the kernel must see), for the naive reference.
class TestCache {
 public:
  TestCache(TensorType type, int n_kv_heads, int head_dim, int64_t n_slots, bool head_major = false)
      : type_(type),
        n_kv_heads_(n_kv_heads),
        head_dim_(head_dim),
        n_slots_(n_slots),
        row_bytes_(KvRowBytes(type, head_dim)),
        head_major_(head_major),
        k_(row_bytes_ * n_slots * n_kv_heads),
        v_(k_.size()) {}

  // Writes position pos: k, v are [n_kv_heads][head_dim].
  void Put(int32_t pos, const float* k, const float* v) {
    std::vector<float> k_seen(n_kv_heads_ * head_dim_), v_seen(k_seen.size());
    const KvView view = View({0, 0});
    for (int h = 0; h < n_kv_heads_; ++h) {
      uint8_t* k_row = k_.data() + (view.KRow(pos, h) - static_cast<const uint8_t*>(view.k));
      uint8_t* v_row = v_.data() + (view.VRow(pos, h) - static_cast<const uint8_t*>(view.v));
      StoreKvRow(type_, k + h * head_dim_, head_dim_, k_row);
      StoreKvRow(type_, v + h * head_dim_, head_dim_, v_row);
      DequantizeRow(type_, k_row, k_seen.data() + h * head_dim_, head_dim_);
      DequantizeRow(type_, v_row, v_seen.data() + h * head_dim_, head_dim_);
    }
    k_history_[pos] = k_seen;
    v_history_[pos] = v_seen;
  }

  KvView View(KeyRange stored, bool v_is_k = false) const {
    KvView view;
    view.type = type_;
    view.k = k_.data();
    view.v = v_is_k ? k_.data() : v_.data();
    view.n_kv_heads = n_kv_heads_;
    view.head_dim = head_dim_;
    view.n_slots = n_slots_;
    view.slot_stride_bytes = head_major_ ? row_bytes_ : row_bytes_ * n_kv_heads_;
    view.head_stride_bytes = head_major_ ? row_bytes_ * n_slots_ : row_bytes_;
    view.stored = stored;
    return view;
  }

  // Naive attention of one query row q [n_heads][head_dim] over keys, in double.
  std::vector<double> Naive(const float* q, int n_heads, KeyRange keys, float scale,
                            bool v_is_k = false) const {
    std::vector<double> out(static_cast<size_t>(n_heads) * head_dim_, 0.0);
    const int group = n_heads / n_kv_heads_;
    for (int h = 0; h < n_heads; ++h) {
      const int kv_head = h / group;
      std::vector<double> scores;
      double max = -INFINITY;
      for (int32_t p = keys.begin; p < keys.end; ++p) {
        const float* k = k_history_.at(p).data() + kv_head * head_dim_;
        double s = 0;
        for (int d = 0; d < head_dim_; ++d) s += static_cast<double>(q[h * head_dim_ + d]) * k[d];
        scores.push_back(s * scale);
        max = std::max(max, s * scale);
      }
      double sum = 0;
      for (double& s : scores) sum += s = std::exp(s - max);
      for (int32_t p = keys.begin; p < keys.end; ++p) {
        const auto& history = v_is_k ? k_history_ : v_history_;
        const float* v = history.at(p).data() + kv_head * head_dim_;
        for (int d = 0; d < head_dim_; ++d) {
          out[h * head_dim_ + d] += scores[p - keys.begin] / sum * v[d];
        }
      }
    }
    return out;
  }

 private:
  TensorType type_;
  int n_kv_heads_, head_dim_;
  int64_t n_slots_;
  size_t row_bytes_;
  bool head_major_;
  std::vector<uint8_t> k_, v_;
  std::map<int32_t, std::vector<float>> k_history_, v_history_;
};

// Fills positions [0, n) of `cache` with random K/V (seeded per position).
inline void FillCache(TestCache& cache, int32_t n, int n_kv_heads, int head_dim, uint32_t seed) {
  for (int32_t p = 0; p < n; ++p) {
    const std::vector<float> k = RandomVector(n_kv_heads * head_dim, seed + 2 * p);
    const std::vector<float> v = RandomVector(n_kv_heads * head_dim, seed + 2 * p + 1);
    cache.Put(p, k.data(), v.data());
  }
}

// Runs Attention for rows at `positions` with queries q [rows][n_heads][head_dim].
inline std::vector<float> RunAttention(const KvView& kv, int n_heads, const std::vector<float>& q,
                                       const std::vector<int32_t>& positions, int32_t window,
                                       ThreadPool* pool = nullptr,
                                       const KeyRange* key_ranges = nullptr, float scale = 1.0f,
                                       const KeyRemap* remaps = nullptr) {
  const size_t row = static_cast<size_t>(n_heads) * kv.head_dim;
  std::vector<float> out(positions.size() * row, NAN);
  AttentionArgs args;
  args.n_rows = static_cast<int>(positions.size());
  args.n_heads = n_heads;
  args.q = q.data();
  args.q_row_stride = row;
  args.out = out.data();
  args.out_row_stride = row;
  args.positions = positions.data();
  args.window = window;
  args.key_ranges = key_ranges;
  args.remaps = remaps;
  args.kv = kv;
  args.scale = scale;
  Attention(args, pool);
  return out;
}

inline constexpr TensorType kKvTypes[] = {TensorType::kF32, TensorType::kF16, TensorType::kBF16,
                                          TensorType::kQ8_0, TensorType::kQ4_0};

}  // namespace tandem::kernels::testing_attention
