// The machine's ceilings, measured in the run that is set against them: the sustained memory read
// bandwidth (the limit of a memory-bound matvec, what `tandem bench` and the benchmark programs
// set decoding and kernels against) and the int8 multiply-add peak (the limit of a quantized
// prefill). Both probes use the active ISA path's widest instructions (probes_isa.h), as the
// kernels they bound do: a probe slower than the kernels would say nothing about them.
#pragma once

#include <cstddef>

#include "base/thread_pool.h"

namespace tandem::kernels {

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
  const unsigned char* data() const { return data_; }
  // Reads every byte once with the active path's ReadSum, each pool thread a contiguous share
  // (as the matmuls split their rows); returns the wrapping sum of its 64-bit words, so the reads
  // cannot be optimised away.
  unsigned long long ReadAll(ThreadPool& pool) const;

 private:
  unsigned char* data_;
  size_t bytes_;
};

// Best-of-`repeats` read bandwidth in bytes per second over a `bytes` buffer (a multiple of
// 1 MiB) with every thread of `pool`, after one read that warms the page tables.
double MeasureReadBandwidth(ThreadPool& pool, size_t bytes = size_t{1} << 30, int repeats = 5);

// Best-of-`repeats` int8 multiply-adds per second with every thread of `pool`, each running the
// active path's int8 dot instruction (vpdpbusd with VNNI, vpmaddubsw + vpmaddwd on AVX2) on
// registers for `rounds` rounds.
double MeasureInt8Peak(ThreadPool& pool, int64_t rounds = 4'000'000, int repeats = 3);

}  // namespace tandem::kernels
