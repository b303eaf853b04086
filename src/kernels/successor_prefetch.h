// Decode steps run the same matrix products in the same order, with serial work in between
// (norms, activation quantization, RoPE, the attention's set-up) while the pool's workers wait.
// SuccessorPrefetch remembers, for one calling thread, which product followed which last time
// and where each pool thread's share of it starts, so that a worker done with one product can
// pull the start of its share of the next into its cache during that wait. A guess only: a
// wrong one costs an idle thread a few hundred kilobytes of reads, never a result.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "base/thread_pool.h"

namespace tandem::kernels {

class SuccessorPrefetch {
 public:
  // What a worker reads ahead of its share of the next product at most: well within its L2.
  static constexpr size_t kBytesPerThread = 384 * 1024;

  // Which product runs: its first matrix and its activation rows (the tiling depends on both).
  struct Key {
    const void* weights = nullptr;
    int64_t rows = 0;
    bool operator==(const Key&) const = default;
  };

  // Records that `key` runs now, its threads' shares starting at `shares` (one range per pool
  // thread), and returns the ranges to prefetch once it is done: the shares of the product
  // that followed `key` last time, or empty if none is known. The span stays valid until the
  // next call.
  std::span<const ThreadPool::PrefetchRange> Run(const Key& key,
                                                 std::span<const ThreadPool::PrefetchRange> shares);

 private:
  struct Slot {
    Key key;
    Key next;
    std::vector<ThreadPool::PrefetchRange> shares;
  };
  // An open-addressed table, emptied when half full: a dense model has a few hundred products;
  // a mixture of experts churns through more, whose order does not repeat anyway.
  static constexpr size_t kSlots = 1024;
  Slot* Find(const Key& key);
  Slot& Insert(const Key& key);

  std::array<Slot, kSlots> slots_;
  size_t used_ = 0;
  Key previous_;
  std::vector<ThreadPool::PrefetchRange> then_;
};

}  // namespace tandem::kernels
