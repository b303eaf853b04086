// The kernels' compute rate: multiply-adds per second of MatMul with the weights already in
// cache, so that no weight read waits on memory. Against it, a forward's multiply-adds give the
// time its matmuls need even if memory were free (`tandem bench --spec` sets that compute floor
// beside the weight reads' floor from the read bandwidth, kernels/machine_limits.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/thread_pool.h"
#include "kernels/matmul.h"

namespace tandem::kernels {

// Multiply-adds per second of MatMul(slice, T rows) on all the pool's threads, where the slice is
// the first rows of `w` (a multiple of 64 rows, about `slice_bytes` of them, or all of w): the
// best of several timed runs after a warm-up, the slice then in cache. slice_bytes 0: half the
// last-level cache, at most 8 MiB (4 MiB where the cache size is unknown); large enough that the
// pool's hand-off is small beside the work. The same layout and kernels as w (its packed copy
// where it has one). Throws Error for an invalid matrix or T < 1.
double MatMulComputeRate(const WeightMatrix& w, int64_t T, ThreadPool& pool,
                         size_t slice_bytes = 0);

}  // namespace tandem::kernels
