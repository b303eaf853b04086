// Measures the machine's sustained memory read bandwidth: the ceiling for a memory-bound matvec.
#pragma once

#include <cstddef>

#include "base/thread_pool.h"

namespace tandem::bench {

// A buffer much larger than the last-level cache, filled with non-zero bytes, for streaming reads.
class ReadBuffer {
 public:
  explicit ReadBuffer(size_t bytes);
  ~ReadBuffer();
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;

  size_t bytes() const { return bytes_; }
  // Reads every byte once, split over the pool's threads; returns a checksum so the reads
  // cannot be optimised away.
  unsigned long long ReadAll(ThreadPool& pool) const;

 private:
  unsigned char* data_;
  size_t bytes_;
};

// Best-of-`repeats` read bandwidth in bytes per second over a `bytes` buffer with every thread
// of `pool`.
double MeasureReadBandwidth(ThreadPool& pool, size_t bytes = size_t{1} << 30, int repeats = 5);

}  // namespace tandem::bench
