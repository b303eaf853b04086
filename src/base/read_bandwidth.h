// The machine's sustained memory read bandwidth: the ceiling for a memory-bound matvec, and what
// `tandem bench` and the Google Benchmark programs set decoding and kernels against.
#pragma once

#include <cstddef>

#include "base/thread_pool.h"

namespace tandem {

// A buffer much larger than the last-level cache, every byte 1, for streaming reads; in huge pages
// where the kernel gives them (base/huge_page_allocator.h), as the repacked weights are: with
// 4 KiB pages every 4 KiB read is a TLB miss the weight stream does not pay.
class ReadBuffer {
 public:
  // `bytes` rounded down to a multiple of 1 MiB (at least 1 MiB).
  explicit ReadBuffer(size_t bytes);
  ~ReadBuffer();
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;

  size_t bytes() const { return bytes_; }
  // Reads every byte once, split over the pool's threads; returns the wrapping sum of its
  // 64-bit words, so the reads cannot be optimised away.
  unsigned long long ReadAll(ThreadPool& pool) const;

 private:
  unsigned char* data_;
  size_t bytes_;
};

// Best-of-`repeats` read bandwidth in bytes per second over a `bytes` buffer (a multiple of
// 1 MiB) with every thread of `pool`, after one read that warms the page tables.
double MeasureReadBandwidth(ThreadPool& pool, size_t bytes = size_t{1} << 30, int repeats = 5);

}  // namespace tandem
