// Attention entry point: argument checks, visible-key ranges, work split over (row, KV head,
// head group), ISA dispatch.
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/attention_isa.h"
#include "kernels/isa.h"
#include "kernels/ops.h"
#include "tensor/quantize.h"

namespace tandem::kernels {
namespace {

std::string RangeText(KeyRange r) {
  std::string text = "[";  // built by appending: GCC 12 -Wrestrict misfires on "[" + string
  text += std::to_string(r.begin);
  text += ", ";
  text += std::to_string(r.end);
  text += ")";
  return text;
}

void CheckRowType(TensorType type, int head_dim) {
  if (!IsKvCacheType(type)) {
    Fail(ErrorKind::kUnsupported, "attention: KV cache type " + std::string(TensorTypeName(type)) +
                                      " is not supported (f32, f16, bf16, q8_0, q4_0)");
  }
  const bool blocked = type == TensorType::kQ8_0 || type == TensorType::kQ4_0;
  const int multiple = blocked ? 32 : 16;
  if (head_dim <= 0 || head_dim > kMaxHeadDim || head_dim % multiple != 0) {
    Fail(ErrorKind::kInvalidArgument,
         "attention: head_dim " + std::to_string(head_dim) + " must be a positive multiple of " +
             std::to_string(multiple) + " for " + std::string(TensorTypeName(type)) +
             " and at most " + std::to_string(kMaxHeadDim));
  }
}

void Invalid(const std::string& what) {
  Fail(ErrorKind::kInvalidArgument, "attention: " + what);
}

void CheckKvView(const KvView& kv) {
  CheckRowType(kv.type, kv.head_dim);
  if (kv.n_kv_heads <= 0) Invalid("n_kv_heads " + std::to_string(kv.n_kv_heads) + " is not > 0");
  if (kv.k == nullptr || kv.v == nullptr) Invalid("kv.k and kv.v must be non-null");
  const size_t row_bytes = KvRowBytes(kv.type, kv.head_dim);
  const bool slot_major = kv.head_stride_bytes >= row_bytes &&
                          kv.slot_stride_bytes >= kv.head_stride_bytes * kv.n_kv_heads;
  const bool head_major = kv.slot_stride_bytes >= row_bytes &&
                          kv.head_stride_bytes >= kv.slot_stride_bytes * kv.n_slots;
  if (kv.n_slots <= 0 || !(slot_major || head_major)) {
    Invalid("KV view strides (slot " + std::to_string(kv.slot_stride_bytes) + " B, head " +
            std::to_string(kv.head_stride_bytes) + " B) do not fit " + std::to_string(kv.n_slots) +
            " slots x " + std::to_string(kv.n_kv_heads) + " heads of " + std::to_string(row_bytes) +
            " B rows");
  }
  if (kv.stored.begin < 0 || kv.stored.end < kv.stored.begin ||
      kv.stored.end - kv.stored.begin > kv.n_slots) {
    Invalid("KV view holds positions " + RangeText(kv.stored) + ", which a ring of " +
            std::to_string(kv.n_slots) + " slots cannot hold");
  }
}

void CheckHeads(int n_heads, int n_kv_heads) {
  if (n_kv_heads <= 0 || n_heads <= 0 || n_heads % n_kv_heads != 0) {
    Invalid("n_heads " + std::to_string(n_heads) + " must be a positive multiple of n_kv_heads " +
            std::to_string(n_kv_heads));
  }
}

void CheckArgs(const AttentionArgs& a) {
  const KvView& kv = a.kv;
  CheckRowType(kv.type, kv.head_dim);
  if (a.n_rows < 0) Invalid("n_rows " + std::to_string(a.n_rows) + " is negative");
  CheckHeads(a.n_heads, kv.n_kv_heads);
  if (a.n_rows == 0) return;
  if (a.q == nullptr || a.out == nullptr) Invalid("q, out, kv.k and kv.v must be non-null");
  CheckKvView(kv);
  if (a.key_ranges == nullptr && a.positions == nullptr) Invalid("need positions or key_ranges");
  if (a.window < 0) Invalid("window " + std::to_string(a.window) + " is negative");
  const size_t row_floats = static_cast<size_t>(a.n_heads) * kv.head_dim;
  if (a.q_row_stride < row_floats || a.out_row_stride < row_floats) {
    Invalid("q_row_stride " + std::to_string(a.q_row_stride) + " / out_row_stride " +
            std::to_string(a.out_row_stride) +
            " smaller than n_heads * head_dim = " + std::to_string(row_floats));
  }
}

// The keys row r sees, checked against what the cache holds.
KeyRange RowKeys(const AttentionArgs& a, int r) {
  KeyRange keys;
  if (a.key_ranges != nullptr) {
    keys = a.key_ranges[r];
  } else {
    if (a.positions[r] < 0) {
      Fail(ErrorKind::kInvalidArgument, "attention: row " + std::to_string(r) + " has position " +
                                            std::to_string(a.positions[r]));
    }
    keys = VisibleKeys(a.positions[r], a.window);
  }
  if (keys.end <= keys.begin) return KeyRange{0, 0};
  if (keys.begin < a.kv.stored.begin || keys.end > a.kv.stored.end) {
    Fail(ErrorKind::kInvalidArgument, "attention: row " + std::to_string(r) +
                                          " needs key positions " + RangeText(keys) +
                                          " but the cache holds " + RangeText(a.kv.stored));
  }
  if (a.remaps != nullptr && a.remaps[r].count > 0) {
    const KeyRemap& m = a.remaps[r];
    if (m.positions == nullptr || m.begin < 0 || keys.end > m.begin + m.count) {
      Invalid("row " + std::to_string(r) + "'s remap of " + std::to_string(m.count) +
              " positions from " + std::to_string(m.begin) + " does not end its keys " +
              RangeText(keys));
    }
    for (int32_t i = 0; i < m.count; ++i) {
      if (m.positions[i] < a.kv.stored.begin || m.positions[i] >= a.kv.stored.end) {
        Invalid("row " + std::to_string(r) + " remaps a key to position " +
                std::to_string(m.positions[i]) + ", which the cache does not hold " +
                RangeText(a.kv.stored));
      }
    }
  }
  return keys;
}

// The cache as row r reads it: with its remap, if any.
KvView RowView(const AttentionArgs& a, int r) {
  KvView view = a.kv;
  if (a.remaps != nullptr && a.remaps[r].count > 0) {
    view.remap = a.remaps[r].positions;
    view.remap_begin = a.remaps[r].begin;
    view.remap_count = a.remaps[r].count;
  }
  return view;
}

// Query heads per task: the heads sharing a KV head go together (they share the K/V loads), at
// most kAttendMaxHeads, and fewer when that leaves threads idle. Any grouping gives the same
// bits: each head is computed on its own.
int HeadsPerTask(int group, size_t n_groups, int n_threads) {
  int n_split = (group + kAttendMaxHeads - 1) / kAttendMaxHeads;
  while (n_split < group && n_groups * n_split < static_cast<size_t>(n_threads)) ++n_split;
  return (group + n_split - 1) / n_split;
}

}  // namespace

KeyRange VisibleKeys(int32_t pos, int32_t window) {
  const int32_t begin = window > 0 ? std::max<int32_t>(0, pos - window + 1) : 0;
  return KeyRange{begin, pos + 1};
}

size_t KvRowBytes(TensorType type, int head_dim) {
  return RowBytes(GetTensorTypeTraits(type), static_cast<uint64_t>(head_dim));
}

void StoreKvRow(TensorType type, const float* x, int head_dim, void* dst) {
  CheckRowType(type, head_dim);
  if (type == TensorType::kF16) {  // the default cache type: the active path's conversion
    ToHalf(x, head_dim, static_cast<uint16_t*>(dst));
    return;
  }
  QuantizeRow(type, x, dst, head_dim);
}

namespace {

int SplitCount(KeyRange keys) {
  return (keys.end - keys.begin + kAttentionKeySplit - 1) / kAttentionKeySplit;
}

KeyRange SplitKeys(KeyRange keys, int i) {
  const int32_t begin = keys.begin + i * kAttentionKeySplit;
  return KeyRange{begin, std::min(begin + kAttentionKeySplit, keys.end)};
}

// One split's softmax state for n heads (AttendSplitState): acc [n][head_dim], max and sum [n].
struct SplitState {
  float* acc;
  float* max_score;
  float* sum;
};

// Folds split b into the state of the splits before it (the same operations whatever ran them).
void FoldSplit(const SplitState& into, const SplitState& b, int n_heads, int hd) {
  for (int g = 0; g < n_heads; ++g) {
    const float m = b.max_score[g] > into.max_score[g] ? b.max_score[g] : into.max_score[g];
    const float ea = std::exp(into.max_score[g] - m), eb = std::exp(b.max_score[g] - m);
    float* acc = into.acc + g * hd;
    const float* acc_b = b.acc + g * hd;
    for (int d = 0; d < hd; ++d) acc[d] = acc[d] * ea + acc_b[d] * eb;
    into.sum[g] = into.sum[g] * ea + b.sum[g] * eb;
    into.max_score[g] = m;
  }
}

void Normalise(const SplitState& s, int n_heads, int hd, float* out) {
  for (int g = 0; g < n_heads; ++g) {
    const float inv_sum = 1.0f / s.sum[g];
    for (int d = 0; d < hd; ++d) out[g * hd + d] = s.acc[g * hd + d] * inv_sum;
  }
}

// A split's state in `buffer` (n heads): acc, then maxima and sums.
SplitState StateAt(float* buffer, int n_heads, int hd) {
  float* max_score = buffer + static_cast<size_t>(n_heads) * hd;
  return SplitState{buffer, max_score, max_score + n_heads};
}
size_t StateFloats(int n_heads, int hd) {
  return static_cast<size_t>(n_heads) * (hd + 2);
}

}  // namespace

void Attention(const AttentionArgs& args, ThreadPool* pool) {
  CheckArgs(args);
  if (args.n_rows == 0) return;
  std::vector<KeyRange> keys(args.n_rows);
  int max_splits = 0;
  for (int r = 0; r < args.n_rows; ++r) {
    keys[r] = RowKeys(args, r);
    max_splits = std::max(max_splits, SplitCount(keys[r]));
  }

  const auto attend = ActiveKernels().attend_heads;
  const int hd = args.kv.head_dim;
  const int n_kv_heads = args.kv.n_kv_heads;
  const int group = args.n_heads / n_kv_heads;
  const int n_threads = pool == nullptr ? 1 : pool->size();
  const size_t n_groups = static_cast<size_t>(args.n_rows) * n_kv_heads;
  // Few rows with long keys (decode, short verifications): the threads share each row's splits,
  // every head of a KV head in one task (they share its loads). Otherwise each task is a (row, KV
  // head, head slice) and runs its splits one after the other.
  const bool split_tasks = max_splits > 1 && n_groups < 2 * static_cast<size_t>(n_threads);
  const int per_task =
      split_tasks ? std::min(group, kAttendMaxHeads) : HeadsPerTask(group, n_groups, n_threads);
  const int tasks_per_group = (group + per_task - 1) / per_task;
  const size_t n_slices = n_groups * tasks_per_group;
  // Slice t: row r, kv head k, query heads [k·group + s·per_task, + n_heads) within the group.
  struct Slice {
    int r, kv_head, n_heads;
    size_t offset;  // of its q and out within the row
  };
  auto slice_at = [&](size_t t) {
    const int s = static_cast<int>(t % tasks_per_group);
    const size_t g = t / tasks_per_group;
    const int first = s * per_task;
    const int kv_head = static_cast<int>(g % n_kv_heads);
    return Slice{static_cast<int>(g / n_kv_heads), kv_head, std::min(per_task, group - first),
                 static_cast<size_t>(kv_head * group + first) * hd};
  };
  auto q_of = [&](const Slice& c) { return args.q + c.r * args.q_row_stride + c.offset; };
  auto out_of = [&](const Slice& c) { return args.out + c.r * args.out_row_stride + c.offset; };
  auto attend_split = [&](const Slice& c, int i, float* buffer) {
    const SplitState s = StateAt(buffer, c.n_heads, hd);
    const AttendSplitState state{s.max_score, s.sum};
    attend(q_of(c), c.n_heads, RowView(args, c.r), c.kv_head, SplitKeys(keys[c.r], i), args.scale,
           s.acc, &state);
  };
  // A slice whose row has one split or none, written straight to the output.
  auto attend_whole = [&](const Slice& c) {
    float* out = out_of(c);
    if (keys[c.r].end == keys[c.r].begin) {
      std::fill(out, out + static_cast<size_t>(c.n_heads) * hd, 0.0f);
      return;
    }
    attend(q_of(c), c.n_heads, RowView(args, c.r), c.kv_head, keys[c.r], args.scale, out, nullptr);
  };
  auto run = [&](size_t n_tasks, const auto& task) {
    if (pool == nullptr) {
      for (size_t t = 0; t < n_tasks; ++t) task(t);
      return;
    }
    pool->ParallelForBalanced(n_tasks, [&task](size_t begin, size_t end, int) {
      for (size_t t = begin; t < end; ++t) task(t);
    });
  };

  if (split_tasks) {
    // Task (slice, split i); then each slice folds its splits in ascending order.
    const size_t floats = StateFloats(per_task, hd);
    std::vector<float> states(n_slices * max_splits * floats);
    auto state_of = [&](size_t t, int i) { return states.data() + (t * max_splits + i) * floats; };
    run(n_slices * max_splits, [&](size_t task) {
      const size_t t = task / max_splits;
      const int i = static_cast<int>(task % max_splits);
      const Slice c = slice_at(t);
      const int n = SplitCount(keys[c.r]);
      if (n <= 1) {
        if (i == 0) attend_whole(c);
      } else if (i < n) {
        attend_split(c, i, state_of(t, i));
      }
    });
    for (size_t t = 0; t < n_slices; ++t) {
      const Slice c = slice_at(t);
      const int n = SplitCount(keys[c.r]);
      if (n <= 1) continue;
      const SplitState first = StateAt(state_of(t, 0), c.n_heads, hd);
      for (int i = 1; i < n; ++i)
        FoldSplit(first, StateAt(state_of(t, i), c.n_heads, hd), c.n_heads, hd);
      Normalise(first, c.n_heads, hd, out_of(c));
    }
    return;
  }
  auto task = [&](size_t t) {
    const Slice c = slice_at(t);
    const int n = SplitCount(keys[c.r]);
    if (n <= 1) return attend_whole(c);
    const size_t floats = StateFloats(c.n_heads, hd);
    std::vector<float> buffer(2 * floats);
    const SplitState first = StateAt(buffer.data(), c.n_heads, hd);
    attend_split(c, 0, buffer.data());
    for (int i = 1; i < n; ++i) {
      attend_split(c, i, buffer.data() + floats);
      FoldSplit(first, StateAt(buffer.data() + floats, c.n_heads, hd), c.n_heads, hd);
    }
    Normalise(first, c.n_heads, hd, out_of(c));
  };
  // Short contexts (a few hundred key rows over all heads) are cheaper than waking the pool.
  int64_t work = 0;
  for (const KeyRange& k : keys) work += static_cast<int64_t>(k.end - k.begin);
  work *= static_cast<int64_t>(args.n_heads) * hd;
  if (work < 65536) {
    for (size_t t = 0; t < n_slices; ++t) task(t);
  } else {
    // Balanced: under a causal mask a batch's later rows see more keys than its first ones.
    run(n_slices, task);
  }
}

void AttentionDense(const DenseAttentionArgs& a, ThreadPool* pool) {
  if (a.n_rows < 0) Invalid("n_rows " + std::to_string(a.n_rows) + " is negative");
  CheckHeads(a.n_heads, a.n_kv_heads);
  if (a.n_rows == 0) return;
  if (a.q == nullptr || a.kt == nullptr || a.v == nullptr || a.out == nullptr) {
    Invalid("q, kt, v and out must be non-null");
  }
  if (a.n_keys < 1 || a.head_dim < 1 || a.v_dim < 16 || a.v_dim % 16 != 0) {
    Invalid("dense attention needs keys, a positive head_dim and v_dim a multiple of 16 (got " +
            std::to_string(a.n_keys) + " keys, head_dim " + std::to_string(a.head_dim) +
            ", v_dim " + std::to_string(a.v_dim) + ")");
  }
  if (a.kt_row_stride < static_cast<size_t>(a.n_keys) ||
      a.v_row_stride < static_cast<size_t>(a.v_dim) ||
      a.q_row_stride < static_cast<size_t>(a.head_dim) ||
      a.out_row_stride < static_cast<size_t>(a.v_dim)) {
    Invalid("dense attention strides are shorter than their rows");
  }
  const auto attend = ActiveKernels().attend_dense_rows;
  const int group = a.n_heads / a.n_kv_heads;
  constexpr int kRowsPerTask = 12;
  const size_t blocks = static_cast<size_t>((a.n_rows + kRowsPerTask - 1) / kRowsPerTask);
  // Task t: head t / blocks, rows [b·kRowsPerTask, +kRowsPerTask) for b = t % blocks; head-major
  // so that a thread's consecutive tasks read one head's K and V.
  auto task = [&](size_t t) {
    const int h = static_cast<int>(t / blocks), g = h / group;
    const int first = static_cast<int>(t % blocks) * kRowsPerTask;
    DenseRows rows;
    rows.n_rows = std::min(kRowsPerTask, a.n_rows - first);
    rows.q = a.q + h * a.q_head_stride + first * a.q_row_stride;
    rows.q_stride = a.q_row_stride;
    rows.kt = a.kt + g * a.kt_head_stride;
    rows.kt_stride = a.kt_row_stride;
    rows.n_keys = a.n_keys;
    rows.head_dim = a.head_dim;
    rows.v = a.v + g * a.v_head_stride;
    rows.v_stride = a.v_row_stride;
    rows.v_dim = a.v_dim;
    rows.scale = a.scale;
    rows.out = a.out + h * a.out_head_stride + first * a.out_row_stride;
    rows.out_stride = a.out_row_stride;
    thread_local std::vector<float> scratch;  // kept for the thread's next task
    scratch.resize(std::max(scratch.size(), DenseScratchValues(a.n_keys, a.v_dim)));
    rows.scratch = scratch.data();
    attend(rows);
  };
  const size_t n_tasks = blocks * a.n_heads;
  if (pool == nullptr || pool->size() == 1) {
    for (size_t t = 0; t < n_tasks; ++t) task(t);
  } else {
    pool->ParallelForBalanced(n_tasks, [&task](size_t begin, size_t end, int) {
      for (size_t t = begin; t < end; ++t) task(t);
    });
  }
}

}  // namespace tandem::kernels
